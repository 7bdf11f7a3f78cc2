/* SPDX-License-Identifier: MIT */
/* Communicators isolate traffic: messages with the same source and tag on
 * MPI_COMM_WORLD, a Comm_dup of it and Comm_split pieces never match each
 * other's receives (even with wildcards, even when sent in the opposite
 * order to the receives), and the bookkeeping calls agree: Comm_compare,
 * Comm_group, Group_incl, Group_translate_ranks, Group_compare, Comm_free. */
#include "mpitest.h"

#define BIG (MT_MIB + 3)

/* Send on 'a' first then 'b' (same dest and tag); receive on 'b' first
 * then 'a'. Values identify the communicator they were sent on. */
static void crossing(MPI_Comm a, MPI_Comm b, int ida, int idb, int dest,
                     int src, int big)
{
    int n = big ? BIG : 16;
    char *sa = mt_malloc((size_t)n), *sb = mt_malloc((size_t)n);
    char *ra = mt_malloc((size_t)n), *rb = mt_malloc((size_t)n);
    MPI_Request req[2];
    MPI_Status st;
    mt_fill(sa, (size_t)n, (uint32_t)(ida * 100 + mt_rank));
    mt_fill(sb, (size_t)n, (uint32_t)(idb * 100 + mt_rank));
    MT_MPI(MPI_Isend(sa, n, MPI_BYTE, dest, 9, a, &req[0]));
    MT_MPI(MPI_Isend(sb, n, MPI_BYTE, dest, 9, b, &req[1]));
    MT_MPI(MPI_Recv(rb, n, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, b, &st));
    MT_EQ(st.MPI_SOURCE, src, "source on the second communicator");
    MT_VERIFY(rb, (size_t)n, (uint32_t)(idb * 100 + src),
              "message received on the communicator it was sent on");
    MT_MPI(MPI_Recv(ra, n, MPI_BYTE, src, 9, a, &st));
    MT_VERIFY(ra, (size_t)n, (uint32_t)(ida * 100 + src),
              "message on the first communicator");
    MT_MPI(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    free(sa);
    free(sb);
    free(ra);
    free(rb);
}

static void check_group_of(MPI_Comm comm, const int *world_of, int n)
{
    MPI_Group wg, g;
    int *idx = mt_malloc((size_t)n * sizeof(int));
    int *out = mt_malloc((size_t)n * sizeof(int));
    MT_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MT_MPI(MPI_Comm_group(comm, &g));
    int gs = -1, gr = -2, cr = -3;
    MT_MPI(MPI_Group_size(g, &gs));
    MT_EQ(gs, n, "Group_size");
    MT_MPI(MPI_Group_rank(g, &gr));
    MT_MPI(MPI_Comm_rank(comm, &cr));
    MT_EQ(gr, cr, "Group_rank equals Comm_rank");
    for (int i = 0; i < n; i++)
        idx[i] = i;
    MT_MPI(MPI_Group_translate_ranks(g, n, idx, wg, out));
    for (int i = 0; i < n; i++)
        MT_EQ(out[i], world_of[i], "Group_translate_ranks to world");
    /* The same group built from the world group with Group_incl. */
    MPI_Group inc;
    int cmp = -1;
    MT_MPI(MPI_Group_incl(wg, n, world_of, &inc));
    MT_MPI(MPI_Group_compare(inc, g, &cmp));
    MT_EQ(cmp, MPI_IDENT, "Group_incl rebuilds the communicator's group");
    MT_MPI(MPI_Group_free(&inc));
    MT_MPI(MPI_Group_free(&g));
    MT_MPI(MPI_Group_free(&wg));
    MT_EQ(g, MPI_GROUP_NULL, "Group_free sets MPI_GROUP_NULL");
    free(idx);
    free(out);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int n = mt_size, me = mt_rank, cmp = -1;
    int dest = (me + 1) % n, src = (me + n - 1) % n;

    /* Dup: congruent, isolated. */
    MPI_Comm dup, dup2;
    MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MT_MPI(MPI_Comm_dup(dup, &dup2));
    MT_MPI(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &cmp));
    MT_EQ(cmp, MPI_IDENT, "world vs world");
    MT_MPI(MPI_Comm_compare(MPI_COMM_WORLD, dup, &cmp));
    MT_EQ(cmp, MPI_CONGRUENT, "world vs dup");
    MT_MPI(MPI_Comm_compare(dup, dup2, &cmp));
    MT_EQ(cmp, MPI_CONGRUENT, "dup vs dup of dup");
    int dr = -1, ds = -1;
    MT_MPI(MPI_Comm_rank(dup, &dr));
    MT_MPI(MPI_Comm_size(dup, &ds));
    MT_EQ(dr, me, "rank in dup");
    MT_EQ(ds, n, "size of dup");
    for (int big = 0; big < 2; big++) {
        crossing(MPI_COMM_WORLD, dup, 1, 2, dest, src, big);
        crossing(dup, MPI_COMM_WORLD, 2, 1, dest, src, big);
        crossing(dup, dup2, 2, 3, dest, src, big);
    }

    /* Split by parity, reversed order inside each half (key = -rank). */
    MPI_Comm half, whole_rev;
    int color = me % 2;
    MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, -me, &half));
    int hn = (n - color + 1) / 2, hr = -1, hs = -1;
    MT_MPI(MPI_Comm_rank(half, &hr));
    MT_MPI(MPI_Comm_size(half, &hs));
    MT_EQ(hs, hn, "size of the parity half");
    /* Members of my half in world order are color, color+2, ...; reversed
     * by the key, so the highest world rank is rank 0. */
    int *world_of = mt_malloc((size_t)n * sizeof(int));
    for (int i = 0; i < hn; i++)
        world_of[i] = color + 2 * (hn - 1 - i);
    MT_EQ(world_of[hr], me, "rank in the parity half");
    check_group_of(half, world_of, hn);
    MT_MPI(MPI_Comm_compare(MPI_COMM_WORLD, half, &cmp));
    MT_EQ(cmp, n > 1 ? MPI_UNEQUAL : MPI_CONGRUENT, "world vs half");
    /* Same members as world, order reversed: similar, not congruent. */
    MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, n - me, &whole_rev));
    MT_MPI(MPI_Comm_compare(MPI_COMM_WORLD, whole_rev, &cmp));
    MT_EQ(cmp, n > 1 ? MPI_SIMILAR : MPI_CONGRUENT, "world vs reversed split");
    for (int i = 0; i < n; i++)
        world_of[i] = n - 1 - i;
    check_group_of(whole_rev, world_of, n);

    /* Traffic inside the halves, with the same tag as world traffic in
     * flight. World ring message is sent first, received last. */
    int hdest = (hr + 1) % hs, hsrc = (hr + hs - 1) % hs;
    for (int big = 0; big < 2; big++) {
        int nb = big ? BIG : 16;
        char *w = mt_malloc((size_t)nb), *h = mt_malloc((size_t)nb);
        char *rw = mt_malloc((size_t)nb), *rh = mt_malloc((size_t)nb);
        MPI_Request req[2];
        mt_fill(w, (size_t)nb, (uint32_t)(500 + me));
        mt_fill(h, (size_t)nb, (uint32_t)(600 + me));
        MT_MPI(MPI_Isend(w, nb, MPI_BYTE, dest, 9, MPI_COMM_WORLD, &req[0]));
        MT_MPI(MPI_Isend(h, nb, MPI_BYTE, hdest, 9, half, &req[1]));
        MPI_Status st;
        MT_MPI(MPI_Recv(rh, nb, MPI_BYTE, MPI_ANY_SOURCE, 9, half, &st));
        MT_EQ(st.MPI_SOURCE, hsrc, "source rank is relative to the half");
        /* hsrc in the half is world rank world_of_half(hsrc). */
        int wsrc = color + 2 * (hn - 1 - hsrc);
        MT_VERIFY(rh, (size_t)nb, (uint32_t)(600 + wsrc), "half traffic");
        MT_MPI(MPI_Recv(rw, nb, MPI_BYTE, src, 9, MPI_COMM_WORLD, &st));
        MT_VERIFY(rw, (size_t)nb, (uint32_t)(500 + src), "world traffic");
        MT_MPI(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
        free(w);
        free(h);
        free(rw);
        free(rh);
    }
    /* A collective on each half gives per-half answers. */
    int sum = 0;
    MT_MPI(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, half));
    int want = 0;
    for (int r = color; r < n; r += 2)
        want += r;
    MT_EQ(sum, want, "Allreduce inside the half");

    /* MPI_UNDEFINED colour gives MPI_COMM_NULL. */
    MPI_Comm none;
    MT_MPI(
        MPI_Comm_split(MPI_COMM_WORLD, me == 0 ? MPI_UNDEFINED : 1, 0, &none));
    if (me == 0)
        MT_CHECK(none == MPI_COMM_NULL, "MPI_UNDEFINED colour gave a comm");
    else
        MT_MPI(MPI_Comm_free(&none));

    MT_MPI(MPI_Comm_free(&whole_rev));
    MT_MPI(MPI_Comm_free(&half));
    MT_MPI(MPI_Comm_free(&dup2));
    MT_MPI(MPI_Comm_free(&dup));
    MT_CHECK(dup == MPI_COMM_NULL && half == MPI_COMM_NULL,
             "Comm_free sets MPI_COMM_NULL");
    /* Creating and freeing many communicators must not exhaust anything
     * (context ids are recycled). */
    for (int i = 0; i < 40; i++) {
        MPI_Comm t;
        MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &t));
        MT_MPI(MPI_Comm_free(&t));
    }
    free(world_of);
    return mt_finish("comm_isolation");
}
