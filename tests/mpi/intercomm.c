/* SPDX-License-Identifier: MIT */
/* Intercommunicators (MPI 4.0 7.6): COMM_WORLD split into two groups
 * (even/odd, then rank 0 against the rest), MPI_Intercomm_create, point-
 * to-point between the groups (status.MPI_SOURCE a remote rank, also with
 * MPI_ANY_SOURCE), every blocking collective with each root form
 * (MPI_ROOT, MPI_PROC_NULL, remote rank), Intercomm_merge with both high
 * orders, remote size/group, dup/split/create/compare/free, and the
 * error classes of bad arguments. Needs 2 ranks or more. */
#include <stdbool.h>

#include "mpitest.h"

#define NV 4

static int s_color, s_lrank, s_lsize, s_rsize;
static int *s_rworld; /* remote rank -> world rank */

static void check_p2p(MPI_Comm ic)
{
    int wr = mt_rank;
    /* One message to every remote rank; received with ANY_SOURCE. */
    for (int j = 0; j < s_rsize; j++) {
        int v = wr * 1000 + j;
        MT_MPI(MPI_Send(&v, 1, MPI_INT, j, 5, ic));
    }
    int *seen = calloc((size_t)s_rsize, sizeof(int));
    for (int k = 0; k < s_rsize; k++) {
        int v;
        MPI_Status st;
        MT_MPI(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, ic, &st));
        MT_CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < s_rsize,
                 "source %d is a remote rank", st.MPI_SOURCE);
        MT_EQ(v, s_rworld[st.MPI_SOURCE] * 1000 + s_lrank, "ANY_SOURCE data");
        MT_EQ(seen[st.MPI_SOURCE]++, 0, "one message per remote rank");
    }
    free(seen);
    /* Specific sources, and sendrecv both ways. */
    for (int j = 0; j < s_rsize; j++) {
        int v = wr * 7 + j, got = -1;
        MPI_Status st;
        MT_MPI(MPI_Sendrecv(&v, 1, MPI_INT, j, 6, &got, 1, MPI_INT, j, 6, ic,
                            &st));
        MT_EQ(st.MPI_SOURCE, j, "sendrecv source");
        MT_EQ(got, s_rworld[j] * 7 + s_lrank, "sendrecv data");
    }
}

/* The group of (color, lrank): true for the root's group. */
static void check_rooted(MPI_Comm ic)
{
    for (int g = 0; g < 2; g++) {
        /* The root is the last member of group g. */
        int gsize = g == s_color ? s_lsize : s_rsize;
        int rr = gsize - 1;
        bool in_root_group = g == s_color;
        int root =
            in_root_group ? (s_lrank == rr ? MPI_ROOT : MPI_PROC_NULL) : rr;
        bool am_root = root == MPI_ROOT;
        int buf[NV];
        /* Bcast */
        for (int i = 0; i < NV; i++)
            buf[i] = am_root ? g * 100 + i : -1;
        MT_MPI(MPI_Bcast(buf, NV, MPI_INT, root, ic));
        if (!in_root_group)
            for (int i = 0; i < NV; i++)
                MT_EQ(buf[i], g * 100 + i, "bcast");
        else if (!am_root)
            MT_EQ(buf[0], -1, "bcast leaves the root's group mates alone");
        /* Reduce: the root gets the sum over the other group. */
        int sb[NV], rb[NV];
        for (int i = 0; i < NV; i++) {
            sb[i] = mt_rank + i;
            rb[i] = -1;
        }
        MT_MPI(MPI_Reduce(sb, rb, NV, MPI_INT, MPI_SUM, root, ic));
        if (am_root) {
            for (int i = 0; i < NV; i++) {
                int want = 0;
                for (int j = 0; j < s_rsize; j++)
                    want += s_rworld[j] + i;
                MT_EQ(rb[i], want, "reduce");
            }
        }
        /* Gather / Gatherv */
        int *big = malloc((size_t)(s_rsize + 1) * 2 * sizeof(int) + 64);
        int *counts = malloc((size_t)s_rsize * sizeof(int) + 4);
        int *displs = malloc((size_t)s_rsize * sizeof(int) + 4);
        int tot = 0;
        for (int j = 0; j < s_rsize; j++) {
            counts[j] = j % 2 + 1;
            displs[j] = tot;
            tot += counts[j];
        }
        int mine[2] = {mt_rank * 10, mt_rank * 10 + 1};
        MT_MPI(MPI_Gather(mine, 1, MPI_INT, big, 1, MPI_INT, root, ic));
        if (am_root)
            for (int j = 0; j < s_rsize; j++)
                MT_EQ(big[j], s_rworld[j] * 10, "gather");
        MT_MPI(MPI_Gatherv(mine, s_lrank % 2 + 1, MPI_INT, big, counts, displs,
                           MPI_INT, root, ic));
        if (am_root)
            for (int j = 0; j < s_rsize; j++)
                for (int k = 0; k < counts[j]; k++)
                    MT_EQ(big[displs[j] + k], s_rworld[j] * 10 + k, "gatherv");
        /* Scatter / Scatterv */
        if (am_root)
            for (int j = 0; j < s_rsize; j++)
                big[j] = j * 100 + g;
        int one = -1;
        MT_MPI(MPI_Scatter(big, 1, MPI_INT, &one, 1, MPI_INT, root, ic));
        if (!in_root_group)
            MT_EQ(one, s_lrank * 100 + g, "scatter");
        if (am_root)
            for (int j = 0; j < s_rsize; j++)
                for (int k = 0; k < counts[j]; k++)
                    big[displs[j] + k] = j * 10 + k;
        int two[2] = {-1, -1};
        MT_MPI(MPI_Scatterv(big, counts, displs, MPI_INT, two, s_lrank % 2 + 1,
                            MPI_INT, root, ic));
        if (!in_root_group)
            for (int k = 0; k < s_lrank % 2 + 1; k++)
                MT_EQ(two[k], s_lrank * 10 + k, "scatterv");
        free(big);
        free(counts);
        free(displs);
    }
}

static void check_all(MPI_Comm ic)
{
    int n = s_rsize;
    int *rb = malloc((size_t)(n * n + 2 * n + 8) * sizeof(int));
    int *sb = malloc((size_t)(n * n + 2 * n + 8) * sizeof(int));
    int *cnt = malloc((size_t)(n + s_lsize) * sizeof(int));
    int *dsp = malloc((size_t)(n + s_lsize) * sizeof(int));
    MPI_Datatype *ty = malloc((size_t)n * sizeof(MPI_Datatype));
    MT_MPI(MPI_Barrier(ic));
    /* Allreduce: the sum over the other group. */
    int v[NV], r[NV];
    for (int i = 0; i < NV; i++)
        v[i] = mt_rank * 3 + i;
    MT_MPI(MPI_Allreduce(v, r, NV, MPI_INT, MPI_SUM, ic));
    for (int i = 0; i < NV; i++) {
        int want = 0;
        for (int j = 0; j < n; j++)
            want += s_rworld[j] * 3 + i;
        MT_EQ(r[i], want, "allreduce");
    }
    /* Allgather(v) */
    int me2[2] = {mt_rank, -mt_rank};
    MT_MPI(MPI_Allgather(me2, 1, MPI_INT, rb, 1, MPI_INT, ic));
    for (int j = 0; j < n; j++)
        MT_EQ(rb[j], s_rworld[j], "allgather");
    int tot = 0;
    for (int j = 0; j < n; j++) {
        cnt[j] = j % 2 + 1;
        dsp[j] = tot;
        tot += cnt[j];
    }
    MT_MPI(MPI_Allgatherv(me2, s_lrank % 2 + 1, MPI_INT, rb, cnt, dsp, MPI_INT,
                          ic));
    for (int j = 0; j < n; j++) {
        MT_EQ(rb[dsp[j]], s_rworld[j], "allgatherv");
        if (cnt[j] == 2)
            MT_EQ(rb[dsp[j] + 1], -s_rworld[j], "allgatherv 2nd");
    }
    /* Alltoall(v, w) */
    for (int j = 0; j < n; j++)
        sb[j] = mt_rank * 1000 + j;
    MT_MPI(MPI_Alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, ic));
    for (int j = 0; j < n; j++)
        MT_EQ(rb[j], s_rworld[j] * 1000 + s_lrank, "alltoall");
    for (int j = 0; j < n; j++) {
        cnt[j] = 1;
        dsp[j] = n - 1 - j;
        sb[n - 1 - j] = mt_rank * 1000 + j;
    }
    MT_MPI(MPI_Alltoallv(sb, cnt, dsp, MPI_INT, rb, cnt, dsp, MPI_INT, ic));
    for (int j = 0; j < n; j++)
        MT_EQ(rb[n - 1 - j], s_rworld[j] * 1000 + s_lrank, "alltoallv");
    for (int j = 0; j < n; j++) {
        dsp[j] = j * (int)sizeof(int);
        ty[j] = MPI_INT;
        sb[j] = mt_rank * 1000 + j + 1;
    }
    MT_MPI(MPI_Alltoallw(sb, cnt, dsp, ty, rb, cnt, dsp, ty, ic));
    for (int j = 0; j < n; j++)
        MT_EQ(rb[j], s_rworld[j] * 1000 + s_lrank + 1, "alltoallw");
    /* Reduce_scatter(_block): vectors of lsize * rsize elements on both
     * sides; local rank r gets elements [r * rsize, (r + 1) * rsize) of
     * the other group's sum. */
    int T = s_lsize * n;
    int *vec = malloc((size_t)T * sizeof(int));
    for (int e = 0; e < T; e++)
        vec[e] = mt_rank + e;
    MT_MPI(MPI_Reduce_scatter_block(vec, rb, n, MPI_INT, MPI_SUM, ic));
    for (int k = 0; k < n; k++) {
        int e = s_lrank * n + k, want = 0;
        for (int j = 0; j < n; j++)
            want += s_rworld[j] + e;
        MT_EQ(rb[k], want, "reduce_scatter_block");
    }
    for (int i = 0; i < s_lsize; i++)
        cnt[i] = n;
    MT_MPI(MPI_Reduce_scatter(vec, rb, cnt, MPI_INT, MPI_MAX, ic));
    for (int k = 0; k < n; k++) {
        int e = s_lrank * n + k, want = -1;
        for (int j = 0; j < n; j++)
            if (s_rworld[j] + e > want)
                want = s_rworld[j] + e;
        MT_EQ(rb[k], want, "reduce_scatter");
    }
    /* Not defined on intercommunicators (the nonblocking and persistent
     * forms of the others: intercomm_nb.c). */
    MT_ERRCLASS(MPI_Scan(v, r, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_COMM, "scan");
    MT_ERRCLASS(MPI_Exscan(v, r, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_COMM,
                "exscan");
    free(vec);
    free(rb);
    free(sb);
    free(cnt);
    free(dsp);
    free(ty);
}

static void check_merge(MPI_Comm ic, int size0)
{
    for (int order = 0; order < 3; order++) {
        /* 0: group 0 low; 1: group 0 high; 2: both low, the tie goes to
         * the group holding world rank 0 (rank 0 of group 0). */
        int high = order == 0 ? s_color : order == 1 ? !s_color : 0;
        MPI_Comm m;
        MT_MPI(MPI_Intercomm_merge(ic, high, &m));
        int mr, ms, flag;
        MT_MPI(MPI_Comm_rank(m, &mr));
        MT_MPI(MPI_Comm_size(m, &ms));
        MT_MPI(MPI_Comm_test_inter(m, &flag));
        MT_EQ(flag, 0, "merged is an intracommunicator");
        MT_EQ(ms, mt_size, "merged size");
        bool first = order == 1 ? s_color == 1 : s_color == 0;
        int want = first ? s_lrank : (mt_size - s_lsize) + s_lrank;
        MT_EQ(mr, want, "merged rank");
        (void)size0;
        int sum = 0;
        MT_MPI(MPI_Allreduce(&mt_rank, &sum, 1, MPI_INT, MPI_SUM, m));
        MT_EQ(sum, mt_size * (mt_size - 1) / 2, "allreduce on merged");
        MT_MPI(MPI_Comm_free(&m));
    }
}

static void check_derived(MPI_Comm ic)
{
    MPI_Comm d;
    int flag, res, rs;
    MT_MPI(MPI_Comm_dup(ic, &d));
    MT_MPI(MPI_Comm_test_inter(d, &flag));
    MT_EQ(flag, 1, "dup is an intercommunicator");
    MT_MPI(MPI_Comm_compare(ic, d, &res));
    MT_EQ(res, MPI_CONGRUENT, "compare with dup");
    MT_MPI(MPI_Comm_compare(ic, MPI_COMM_WORLD, &res));
    MT_EQ(res, MPI_UNEQUAL, "compare with world");
    MT_MPI(MPI_Comm_set_name(d, "inter dup"));
    check_p2p(d);
    check_all(d);
    MT_MPI(MPI_Comm_free(&d));
    /* Split reversing the order within each group. */
    MPI_Comm sp;
    MT_MPI(MPI_Comm_split(ic, 0, -s_lrank, &sp));
    MT_MPI(MPI_Comm_test_inter(sp, &flag));
    MT_EQ(flag, 1, "split gives an intercommunicator");
    int r;
    MT_MPI(MPI_Comm_rank(sp, &r));
    MT_EQ(r, s_lsize - 1 - s_lrank, "split rank");
    MT_MPI(MPI_Comm_remote_size(sp, &rs));
    MT_EQ(rs, s_rsize, "split remote size");
    int x = mt_rank, y = -1;
    MT_MPI(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAX, sp));
    int want = -1;
    for (int j = 0; j < s_rsize; j++)
        if (s_rworld[j] > want)
            want = s_rworld[j];
    MT_EQ(y, want, "allreduce on split");
    MT_MPI(MPI_Comm_free(&sp));
    /* Split with an undefined colour on one side: null everywhere for
     * that colour. */
    MT_MPI(MPI_Comm_split(ic, s_color == 0 ? MPI_UNDEFINED : 1, 0, &sp));
    MT_CHECK(sp == MPI_COMM_NULL, "colour missing on one side: null");
    /* Create from the local group: same as a dup. */
    MPI_Group lg;
    MT_MPI(MPI_Comm_group(ic, &lg));
    MPI_Comm cr;
    MT_MPI(MPI_Comm_create(ic, lg, &cr));
    MT_MPI(MPI_Comm_compare(ic, cr, &res));
    MT_EQ(res, MPI_CONGRUENT, "create with the whole group");
    MT_MPI(MPI_Barrier(cr));
    MT_MPI(MPI_Comm_free(&cr));
    MT_MPI(MPI_Group_free(&lg));
    /* Split by node (MPI 4.0 allows an intercommunicator): one node here,
     * so both groups whole; the remote side still the other group. */
    MPI_Comm sh;
    MT_MPI(MPI_Comm_split_type(ic, MPI_COMM_TYPE_SHARED, s_lrank, MPI_INFO_NULL,
                               &sh));
    MT_MPI(MPI_Comm_test_inter(sh, &flag));
    MT_EQ(flag, 1, "split_type shared of an intercommunicator");
    MT_MPI(MPI_Comm_remote_size(sh, &rs));
    MT_EQ(rs, s_rsize, "split_type shared: remote size");
    MT_MPI(MPI_Comm_rank(sh, &r));
    MT_EQ(r, s_lrank, "split_type shared: rank by key");
    x = mt_rank;
    y = -1;
    MT_MPI(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAX, sh));
    MT_EQ(y, want, "allreduce on the split_type result");
    MT_MPI(MPI_Comm_free(&sh));
}

static void run(int mode)
{
    s_color = mode == 0 ? mt_rank % 2 : (mt_rank == 0 ? 0 : 1);
    MPI_Comm local;
    MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, s_color, mt_rank, &local));
    MT_MPI(MPI_Comm_rank(local, &s_lrank));
    MT_MPI(MPI_Comm_size(local, &s_lsize));
    /* Leaders: world 0 (group 0) and world 1 (group 1). */
    MPI_Comm ic;
    MT_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, s_color == 0 ? 1 : 0,
                                42 + mode, &ic));
    int flag, sz, rk;
    MT_MPI(MPI_Comm_test_inter(ic, &flag));
    MT_EQ(flag, 1, "test_inter");
    MT_MPI(MPI_Comm_size(ic, &sz));
    MT_MPI(MPI_Comm_rank(ic, &rk));
    MT_EQ(sz, s_lsize, "size is the local group's");
    MT_EQ(rk, s_lrank, "rank is the local group's");
    MT_MPI(MPI_Comm_remote_size(ic, &s_rsize));
    MT_EQ(s_rsize, mt_size - s_lsize, "remote size");
    /* The remote group in world ranks: the other colour, in rank order. */
    MPI_Group rg, wg;
    MT_MPI(MPI_Comm_remote_group(ic, &rg));
    MT_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int *idx = malloc((size_t)s_rsize * sizeof(int));
    s_rworld = malloc((size_t)s_rsize * sizeof(int));
    for (int j = 0; j < s_rsize; j++)
        idx[j] = j;
    MT_MPI(MPI_Group_translate_ranks(rg, s_rsize, idx, wg, s_rworld));
    for (int j = 0, w = 0; j < s_rsize; j++, w++) {
        while ((mode == 0 ? w % 2 : (w == 0 ? 0 : 1)) == s_color)
            w++;
        MT_EQ(s_rworld[j], w, "remote group member");
    }
    MT_MPI(MPI_Group_free(&rg));
    MT_MPI(MPI_Group_free(&wg));
    free(idx);

    check_p2p(ic);
    check_rooted(ic);
    check_all(ic);
    check_merge(ic, 0);
    check_derived(ic);

    /* Errors: a bad local leader (everywhere), a remote leader outside
     * peer_comm (both leaders see it and tell their groups). */
    MPI_Comm bad = MPI_COMM_WORLD;
    MT_ERRCLASS(
        MPI_Intercomm_create(local, s_lsize, MPI_COMM_WORLD, 0, 1, &bad),
        MPI_ERR_RANK, "bad local leader");
    MT_CHECK(bad == MPI_COMM_NULL, "no communicator on error");
    MT_ERRCLASS(
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, mt_size, 1, &bad),
        MPI_ERR_RANK, "bad remote leader");
    MT_MPI(MPI_Comm_free(&ic));
    MT_CHECK(ic == MPI_COMM_NULL, "freed");
    MT_MPI(MPI_Comm_free(&local));
    free(s_rworld);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int flag, sz;
    MT_MPI(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
    MT_EQ(flag, 0, "world is an intracommunicator");
    MT_ERRCLASS(MPI_Comm_remote_size(MPI_COMM_WORLD, &sz), MPI_ERR_COMM,
                "remote_size of an intracommunicator");
    MPI_Comm m;
    MT_ERRCLASS(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &m), MPI_ERR_COMM,
                "merging an intracommunicator");
    /* Overlapping groups: world with itself. */
    MPI_Comm bad;
    MT_ERRCLASS(
        MPI_Intercomm_create(MPI_COMM_WORLD, 0, MPI_COMM_WORLD, 0, 3, &bad),
        MPI_ERR_COMM, "overlapping groups");
    if (mt_size >= 2) {
        run(0);
        run(1);
    }
    return mt_finish("intercomm");
}
