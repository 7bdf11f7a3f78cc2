/* SPDX-License-Identifier: MIT */
/* MPI_Barrier and MPI_Ibarrier with ranks outnumbering cores: a counter
 * at the line of the communicator's member 0 that the last member to
 * arrive resets and releases (src/coll/shm.c, fy_coll_bar_arrive). Every rank
 * stores the number of the barrier it is about to enter into a shared-memory
 * window (MPI_Win_allocate_shared); after barrier k each rank must find every
 * member's number at k or k+1 (never below: a member released early; the
 * next one at most, since k+2 needs this rank in barrier k+1). Run on
 * the node's ranks, on halves of them whose member 0 is not rank 0 (the
 * keys reversed), on duplicates, and on communicators created and freed
 * over and over so that context ids (and with them the counters' lines)
 * are reused by communicators of other sizes and other members 0. One
 * member of some rounds comes late (a busy loop) so that the others yield
 * and sleep meanwhile. Under several (virtual) nodes it runs on each
 * node's ranks (MPI_COMM_TYPE_SHARED), which share the window. */
#include "mpitest.h"

#include <stdint.h>

#ifndef BARRIER_ROUNDS
#define BARRIER_ROUNDS 2000
#endif

static int64_t *s_arr; /* the window: one number per rank of the node */
static MPI_Comm s_node;

static void late(double us)
{
    double until = MPI_Wtime() + us * 1e-6;
    while (MPI_Wtime() < until)
        ;
}

/* n barriers on c, whose members are the world ranks in[]; k0 numbers
 * them (distinct from every other run's, so a stale number shows). */
static void run(MPI_Comm c, const int *in, int size, int64_t k0, int n,
                const char *what)
{
    int me = 0;
    MT_MPI(MPI_Comm_rank(c, &me));
    for (int i = 0; i < n; i++) {
        int64_t k = k0 + i;
        if ((i % 7) == 0 && me == (int)((k / 7) % size))
            late(30);
        __atomic_store_n(&s_arr[in[me]], k, __ATOMIC_RELEASE);
        /* By turns: MPI_Barrier; MPI_Ibarrier and MPI_Wait; MPI_Ibarrier,
         * then MPI_Barrier while it is pending (the two count apart),
         * then MPI_Wait. */
        MPI_Request rq;
        switch (i % 3) {
        case 0:
            MT_MPI(MPI_Barrier(c));
            break;
        case 1:
            MT_MPI(MPI_Ibarrier(c, &rq));
            MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            break;
        default:
            MT_MPI(MPI_Ibarrier(c, &rq));
            MT_MPI(MPI_Barrier(c));
            MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            break;
        }
        for (int j = 0; j < size; j++) {
            int64_t v = __atomic_load_n(&s_arr[in[j]], __ATOMIC_ACQUIRE);
            if (v != k && v != k + 1)
                MT_FAIL("%s: after barrier %lld member %d (node rank %d) is at "
                        "%lld",
                        what, (long long)k, j, in[j], (long long)v);
        }
    }
    /* Nobody may store the next run's numbers before everyone checked. */
    MT_MPI(MPI_Barrier(c));
}

static void members(MPI_Comm c, int *in, int *size)
{
    MPI_Group g, wg;
    MT_MPI(MPI_Comm_size(c, size));
    MT_MPI(MPI_Comm_group(c, &g));
    MT_MPI(MPI_Comm_group(s_node, &wg));
    int ranks[64];
    for (int r = 0; r < *size; r++)
        ranks[r] = r;
    MT_MPI(MPI_Group_translate_ranks(g, *size, ranks, wg, in));
    MT_MPI(MPI_Group_free(&g));
    MT_MPI(MPI_Group_free(&wg));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MT_CHECK(mt_size <= 64, "at most 64 ranks");
    MPI_Comm node;
    MT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                               MPI_INFO_NULL, &node));
    s_node = node;
    int me = 0, p = 0;
    MT_MPI(MPI_Comm_rank(node, &me));
    MT_MPI(MPI_Comm_size(node, &p));
    MPI_Win win;
    int64_t *base = NULL;
    MT_MPI(MPI_Win_allocate_shared(
        me == 0 ? (MPI_Aint)(p * sizeof(int64_t)) : 0, sizeof(int64_t),
        MPI_INFO_NULL, node, &base, &win));
    MPI_Aint sz;
    int du;
    MT_MPI(MPI_Win_shared_query(win, 0, &sz, &du, &s_arr));
    if (me == 0)
        for (int r = 0; r < p; r++)
            __atomic_store_n(&s_arr[r], 0, __ATOMIC_RELAXED);
    MT_MPI(MPI_Barrier(node));

    int in[64], size;
    int64_t k0 = 1;

    members(node, in, &size);
    if (size > 1)
        run(node, in, size, k0, BARRIER_ROUNDS, "node");
    k0 += BARRIER_ROUNDS + 1;

    /* Halves, keys reversed: member 0 of each is its highest rank. */
    MPI_Comm half;
    MT_MPI(MPI_Comm_split(node, me % 2, p - me, &half));
    members(half, in, &size);
    if (size > 1)
        run(half, in, size, k0, BARRIER_ROUNDS / 2, "half");
    k0 += BARRIER_ROUNDS / 2 + 1;
    MT_MPI(MPI_Barrier(node));
    MT_MPI(MPI_Comm_free(&half));

    /* Created and freed over and over: contexts reused by communicators
     * of other sizes, other members 0. */
    for (int it = 0; it < 40; it++) {
        MPI_Comm c;
        if (it % 3 == 0)
            MT_MPI(MPI_Comm_dup(node, &c));
        else
            MT_MPI(MPI_Comm_split(node, (me + it) % (it % 3 + 1),
                                  (me * 7 + it) % p, &c));
        members(c, in, &size);
        if (size > 1)
            run(c, in, size, k0, 25, "created and freed");
        k0 += 26;
        MT_MPI(MPI_Barrier(node));
        MT_MPI(MPI_Comm_free(&c));
    }

    MT_MPI(MPI_Win_free(&win));
    MT_MPI(MPI_Comm_free(&node));
    return mt_finish("barrier_shm");
}
