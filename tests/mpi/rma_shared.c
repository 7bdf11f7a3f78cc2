/* SPDX-License-Identifier: MIT */
/* MPI_Win_allocate_shared: contiguous by default (each rank's segment
 * ends where the next begins), page-aligned with alloc_shared_noncontig;
 * MPI_Win_shared_query; direct loads and stores between fences; window
 * attributes, name, group, info; MPI_Comm_split_type(SHARED), and
 * HW_GUIDED with "mpi_hw_resource_type" = "mpi_shared_memory" (the same
 * split; unknown values give MPI_COMM_NULL, HW_UNGUIDED something smaller
 * or nothing); a window left
 * for MPI_Finalize to free. */
#include <unistd.h>

#include "mpitest.h"

static MPI_Aint seg_size(int r)
{
    return (MPI_Aint)(r * 1000 + 24); /* uneven, multiples of 8 */
}

static void run(MPI_Comm comm, int noncontig)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    MPI_Info info = MPI_INFO_NULL;
    if (noncontig) {
        MT_MPI(MPI_Info_create(&info));
        MT_MPI(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    }
    unsigned char *mine = NULL;
    MPI_Win win;
    MT_MPI(MPI_Win_allocate_shared(seg_size(me), 1, info, comm, &mine, &win));
    if (info != MPI_INFO_NULL)
        MT_MPI(MPI_Info_free(&info));
    long pg = sysconf(_SC_PAGESIZE);
    unsigned char *prev_end = NULL;
    for (int r = 0; r < n; r++) {
        MPI_Aint sz = -1;
        int du = -1;
        unsigned char *b = NULL;
        MT_MPI(MPI_Win_shared_query(win, r, &sz, &du, &b));
        MT_EQ(sz, seg_size(r), "shared_query size");
        MT_EQ(du, 1, "shared_query disp_unit");
        if (r == me)
            MT_CHECK(b == mine, "shared_query of myself is my base");
        if (noncontig)
            MT_EQ((uintptr_t)b % (uintptr_t)pg, 0, "noncontig page-aligned");
        else if (r > 0)
            MT_CHECK(b == prev_end, "rank %d's segment follows rank %d's", r,
                     r - 1);
        prev_end = b + sz;
    }
    /* Each rank writes its own segment with stores, then reads everyone
     * else's with loads between fences. */
    MT_MPI(MPI_Win_fence(0, win));
    mt_fill(mine, (size_t)seg_size(me), (uint32_t)(me * 31 + noncontig));
    MT_MPI(MPI_Win_fence(0, win));
    for (int r = 0; r < n; r++) {
        MPI_Aint sz;
        int du;
        unsigned char *b;
        MT_MPI(MPI_Win_shared_query(win, r, &sz, &du, &b));
        MT_VERIFY(b, (size_t)sz, (uint32_t)(r * 31 + noncontig),
                  "segment read through shared memory");
    }
    MT_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win)); /* all done reading */
    /* Rank r writes into rank r+1's segment, MPI_Win_sync + barrier. */
    MT_MPI(MPI_Win_lock_all(0, win));
    int right = (me + 1) % n;
    MPI_Aint sz;
    int du;
    unsigned char *rb;
    MT_MPI(MPI_Win_shared_query(win, right, &sz, &du, &rb));
    mt_fill(rb, (size_t)sz, (uint32_t)(1000 + me));
    MT_MPI(MPI_Win_sync(win));
    MPI_Barrier(comm);
    MT_MPI(MPI_Win_sync(win));
    MT_VERIFY(mine, (size_t)seg_size(me), (uint32_t)(1000 + (me + n - 1) % n),
              "left neighbour's stores");
    MT_MPI(MPI_Win_unlock_all(win));

    /* Attributes. */
    void *v;
    int flag = 0;
    MT_MPI(MPI_Win_get_attr(win, MPI_WIN_BASE, &v, &flag));
    MT_CHECK(flag && v == mine, "MPI_WIN_BASE");
    MT_MPI(MPI_Win_get_attr(win, MPI_WIN_SIZE, &v, &flag));
    MT_EQ(*(MPI_Aint *)v, seg_size(me), "MPI_WIN_SIZE");
    MT_MPI(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &v, &flag));
    MT_EQ(*(int *)v, 1, "MPI_WIN_DISP_UNIT");
    MT_MPI(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &v, &flag));
    MT_EQ(*(int *)v, MPI_WIN_FLAVOR_SHARED, "MPI_WIN_CREATE_FLAVOR");
    MT_MPI(MPI_Win_get_attr(win, MPI_WIN_MODEL, &v, &flag));
    MT_EQ(*(int *)v, MPI_WIN_UNIFIED, "MPI_WIN_MODEL");
    MT_MPI(MPI_Win_free(&win));
    MT_EQ(win, MPI_WIN_NULL, "freed window handle");
}

static int s_deleted;
static int del_fn(MPI_Win w, int kv, void *val, void *extra)
{
    (void)w;
    (void)kv;
    (void)extra;
    s_deleted += *(int *)val;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm node;
    MT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                               MPI_INFO_NULL, &node));
    int nn;
    MPI_Comm_size(node, &nn);
    MT_EQ(nn, mt_size, "ranks of the node");
    {
        MPI_Info in;
        MPI_Comm hw;
        int cmp;
        MT_MPI(MPI_Info_create(&in));
        MT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0,
                                   in, &hw));
        MT_CHECK(hw == MPI_COMM_NULL, "HW_GUIDED without a resource type");
        MT_MPI(MPI_Info_set(in, "mpi_hw_resource_type", "no-such-level"));
        MT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0,
                                   in, &hw));
        MT_CHECK(hw == MPI_COMM_NULL, "HW_GUIDED with an unknown level");
        MT_MPI(MPI_Info_set(in, "mpi_hw_resource_type", "mpi_shared_memory"));
        MT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED,
                                   mt_size - mt_rank, in, &hw));
        MT_CHECK(hw != MPI_COMM_NULL, "HW_GUIDED mpi_shared_memory");
        MT_MPI(MPI_Comm_compare(hw, node, &cmp));
        /* The same members, in the reverse order of the keys. */
        MT_EQ(cmp, mt_size > 1 ? MPI_SIMILAR : MPI_CONGRUENT,
              "HW_GUIDED mpi_shared_memory vs SHARED");
        MT_MPI(MPI_Comm_free(&hw));
        MT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0,
                                   in, &hw));
        /* Below the node by hwloc's levels, or nothing further (split_hw
         * checks the levels themselves). */
        if (hw != MPI_COMM_NULL) {
            int hs;
            MT_MPI(MPI_Comm_size(hw, &hs));
            MT_CHECK(hs < mt_size, "HW_UNGUIDED is strictly smaller");
            MT_MPI(MPI_Comm_free(&hw));
        }
        MT_MPI(MPI_Info_free(&in));
    }
    run(node, 0);
    run(node, 1);
    run(MPI_COMM_SELF, 0);

    /* Names, group, info, keyvals, error handlers of a window. */
    MPI_Win win;
    double *base;
    MT_MPI(MPI_Win_allocate_shared(64, 8, MPI_INFO_NULL, node, &base, &win));
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MT_MPI(MPI_Win_get_name(win, name, &len));
    MT_EQ(len, 0, "default window name");
    MT_MPI(MPI_Win_set_name(win, "ferry window"));
    MT_MPI(MPI_Win_get_name(win, name, &len));
    MT_CHECK(strcmp(name, "ferry window") == 0, "window name %s", name);
    MPI_Group g, wg;
    int cmp;
    MT_MPI(MPI_Win_get_group(win, &g));
    MPI_Comm_group(node, &wg);
    MPI_Group_compare(g, wg, &cmp);
    MT_EQ(cmp, MPI_IDENT, "window group");
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    MPI_Info info;
    MT_MPI(MPI_Win_get_info(win, &info));
    MT_MPI(MPI_Info_free(&info));
    MT_MPI(MPI_Info_create(&info));
    MT_MPI(MPI_Info_set(info, "no_locks", "false"));
    MT_MPI(MPI_Win_set_info(win, info));
    MT_MPI(MPI_Info_free(&info));
    int kv, val = 5, flag = 0;
    MT_MPI(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &kv, NULL));
    MT_MPI(MPI_Win_set_attr(win, kv, &val));
    void *got;
    MT_MPI(MPI_Win_get_attr(win, kv, &got, &flag));
    MT_CHECK(flag && got == &val, "user window attribute");
    MT_MPI(MPI_Win_delete_attr(win, kv));
    MT_EQ(s_deleted, 5, "delete callback ran");
    MT_MPI(MPI_Win_set_attr(win, kv, &val));
    MT_MPI(MPI_Win_free_keyval(&kv));
    MPI_Errhandler eh;
    MT_MPI(MPI_Win_get_errhandler(win, &eh));
    MT_EQ(eh, MPI_ERRORS_ARE_FATAL, "default window error handler");
    MPI_Errhandler_free(&eh);
    MT_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MT_MPI(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    MT_MPI(MPI_Win_free(&win));
    MT_EQ(s_deleted, 10, "delete callback ran at MPI_Win_free");
    /* A window the program never frees: MPI_Finalize unmaps it. */
    MT_MPI(MPI_Win_allocate_shared(4096, 1, MPI_INFO_NULL, node, &base, &win));
    MPI_Comm_free(&node);
    return mt_finish("rma_shared");
}
