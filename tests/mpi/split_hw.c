/* SPDX-License-Identifier: MIT */
/* MPI_Comm_split_type by hardware (MPI 4.0 7.4.2), checked against hwloc's
 * view computed here: HW_GUIDED with each hwloc type name (also with the
 * "hwloc://" prefix) groups the ranks whose CPU binding lies in the same
 * object of that type on the same node, ordered by key, and gives
 * MPI_COMM_NULL where the binding spans several; "mpi_shared_memory" is
 * the node (MPI_COMM_TYPE_SHARED's group); an unknown type, an empty one,
 * a missing key and MPI_INFO_NULL give MPI_COMM_NULL; HW_UNGUIDED
 * returns strictly smaller communicators, naming the level in the info
 * object (HW_GUIDED with that name gives the same group), until
 * MPI_COMM_NULL; a rank passing MPI_UNDEFINED meanwhile gets nothing.
 * Run unbound and with --bind-to core (several ranks per core). Without
 * hwloc at build time only the hwloc-free checks run. */
#include <stdbool.h>

#include "mpitest.h"

#ifdef MT_HAVE_HWLOC
#include <hwloc.h>
static hwloc_topology_t s_topo;
#endif

static int s_node; /* the lowest world rank of this rank's node */

/* This rank's object of type 'name' as "index", or -1 (unknown type,
 * none here, or the binding spans several). */
static int my_object(const char *name)
{
#ifdef MT_HAVE_HWLOC
    if (strncmp(name, "hwloc://", 8) == 0)
        name += 8;
    hwloc_obj_type_t type;
    if (hwloc_type_sscanf(name, &type, NULL, 0) != 0)
        return -1;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(s_topo, set, HWLOC_CPUBIND_PROCESS) != 0 ||
        hwloc_bitmap_iszero(set))
        hwloc_bitmap_copy(set, hwloc_topology_get_topology_cpuset(s_topo));
    int found = -1;
    for (hwloc_obj_t o = hwloc_get_next_obj_by_type(s_topo, type, NULL); o;
         o = hwloc_get_next_obj_by_type(s_topo, type, o))
        if (o->cpuset && hwloc_bitmap_isincluded(set, o->cpuset)) {
            found = (int)o->logical_index;
            break;
        }
    hwloc_bitmap_free(set);
    return found;
#else
    (void)name;
    return -1;
#endif
}

/* newcomm's members, as world ranks in its rank order, must be exactly
 * the world ranks r with want[r], in increasing order (key = world rank). */
static void expect_members(MPI_Comm nc, const int *want, const char *what)
{
    int n = 0;
    for (int r = 0; r < mt_size; r++)
        n += want[r] != 0;
    if (!want[mt_rank]) {
        MT_CHECK(nc == MPI_COMM_NULL, "%s: MPI_COMM_NULL expected", what);
        return;
    }
    MT_CHECK(nc != MPI_COMM_NULL, "%s: a communicator expected", what);
    int sz;
    MT_MPI(MPI_Comm_size(nc, &sz));
    MT_EQ(sz, n, what);
    int *w = malloc((size_t)sz * sizeof(int));
    MT_MPI(MPI_Allgather(&mt_rank, 1, MPI_INT, w, 1, MPI_INT, nc));
    for (int i = 0, r = 0; i < sz; i++, r++) {
        while (!want[r])
            r++;
        MT_EQ(w[i], r, what);
    }
    free(w);
}

static MPI_Comm split_guided(MPI_Comm c, const char *type)
{
    MPI_Info info;
    MPI_Comm nc;
    MT_MPI(MPI_Info_create(&info));
    MT_MPI(MPI_Info_set(info, "mpi_hw_resource_type", type));
    MT_MPI(MPI_Comm_split_type(c, MPI_COMM_TYPE_HW_GUIDED, mt_rank, info, &nc));
    char v[64];
    int flag = 0;
    MT_MPI(MPI_Info_get_string(info, "mpi_hw_resource_type", &(int){64}, v,
                               &flag));
    MT_CHECK(flag && strcmp(v, type) == 0, "HW_GUIDED leaves the info alone");
    MT_MPI(MPI_Info_free(&info));
    return nc;
}

/* The ranks of world whose (node, object) equals ours, or nobody if we
 * have no object. */
static void check_type(const char *type)
{
    int me[2] = {s_node, my_object(type)};
    int *all = malloc(2 * (size_t)mt_size * sizeof(int));
    int *want = calloc((size_t)mt_size, sizeof(int));
    MT_MPI(MPI_Allgather(me, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < mt_size; r++)
        want[r] = me[1] >= 0 && all[2 * r] == me[0] && all[2 * r + 1] == me[1];
    MPI_Comm nc = split_guided(MPI_COMM_WORLD, type);
    char what[96];
    snprintf(what, sizeof what, "HW_GUIDED %s", type);
    expect_members(nc, want, what);
    if (nc != MPI_COMM_NULL)
        MT_MPI(MPI_Comm_free(&nc));
    free(all);
    free(want);
}

static void check_null(MPI_Comm nc, const char *what)
{
    MT_CHECK(nc == MPI_COMM_NULL, "%s gives MPI_COMM_NULL", what);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
#ifdef MT_HAVE_HWLOC
    hwloc_topology_init(&s_topo);
    hwloc_topology_load(s_topo);
#endif
    MPI_Comm shm, nc;
    MT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                               MPI_INFO_NULL, &shm));
    MT_MPI(MPI_Allreduce(&mt_rank, &s_node, 1, MPI_INT, MPI_MIN, shm));

    /* mpi_shared_memory: the node. */
    nc = split_guided(MPI_COMM_WORLD, "mpi_shared_memory");
    int cmp;
    MPI_Group g1, g2;
    MT_MPI(MPI_Comm_group(nc, &g1));
    MT_MPI(MPI_Comm_group(shm, &g2));
    MT_MPI(MPI_Group_compare(g1, g2, &cmp));
    MT_EQ(cmp, MPI_IDENT, "mpi_shared_memory is the node");
    MT_MPI(MPI_Group_free(&g1));
    MT_MPI(MPI_Group_free(&g2));
    MT_MPI(MPI_Comm_free(&nc));

    /* No resource type, or none Ferry knows: MPI_COMM_NULL, no error. */
    MT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0,
                               MPI_INFO_NULL, &nc));
    check_null(nc, "MPI_INFO_NULL");
    MPI_Info info;
    MT_MPI(MPI_Info_create(&info));
    MT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info,
                               &nc));
    check_null(nc, "no mpi_hw_resource_type");
    MT_MPI(MPI_Info_free(&info));
    const char *bad[] = {"@dont-thread-on-me@", "", "Bogus", "hwloc://",
                         "hwloc://Nonsense"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        check_null(split_guided(MPI_COMM_WORLD, bad[i]), bad[i]);

#ifdef MT_HAVE_HWLOC
    const char *types[] = {
        "Machine",      "Package",         "NUMANode", "L3Cache",
        "L2Cache",      "L1Cache",         "Core",     "PU",
        "hwloc://Core", "hwloc://L3Cache", "l2",       "core"};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        check_type(types[i]);
#endif

    /* HW_UNGUIDED to the end: strictly smaller each time, the level named
     * in the info, and HW_GUIDED with that name gives the same group. */
    MPI_Comm cur = MPI_COMM_WORLD;
    int levels = 0;
    for (;;) {
        int cs;
        MT_MPI(MPI_Comm_size(cur, &cs));
        MT_MPI(MPI_Info_create(&info));
        MT_MPI(
            MPI_Comm_split_type(cur, MPI_COMM_TYPE_HW_UNGUIDED, 0, info, &nc));
        int null = nc == MPI_COMM_NULL, any;
        MT_MPI(MPI_Allreduce(&null, &any, 1, MPI_INT, MPI_MAX, cur));
        MT_EQ(any, null, "HW_UNGUIDED ends at once for all members");
        if (null) {
            MT_MPI(MPI_Info_free(&info));
            break;
        }
        int ns, flag = 0, len = 64;
        char v[64];
        MT_MPI(MPI_Comm_size(nc, &ns));
        MT_CHECK(ns < cs, "HW_UNGUIDED: %d not below %d", ns, cs);
        MT_MPI(
            MPI_Info_get_string(info, "mpi_hw_resource_type", &len, v, &flag));
        MT_CHECK(flag && v[0], "HW_UNGUIDED names its level");
        MPI_Comm again = split_guided(cur, v);
        MT_CHECK(again != MPI_COMM_NULL, "HW_GUIDED %s after HW_UNGUIDED", v);
        MT_MPI(MPI_Comm_group(nc, &g1));
        MT_MPI(MPI_Comm_group(again, &g2));
        MT_MPI(MPI_Group_compare(g1, g2, &cmp));
        MT_EQ(cmp, MPI_IDENT, "HW_UNGUIDED level's group");
        MT_MPI(MPI_Group_free(&g1));
        MT_MPI(MPI_Group_free(&g2));
        MT_MPI(MPI_Comm_free(&again));
        MT_MPI(MPI_Info_free(&info));
        if (cur != MPI_COMM_WORLD)
            MT_MPI(MPI_Comm_free(&cur));
        cur = nc;
        MT_CHECK(++levels < 32, "HW_UNGUIDED ends");
    }
    if (cur != MPI_COMM_WORLD)
        MT_MPI(MPI_Comm_free(&cur));

    /* Only rank 0 asks (the others pass MPI_UNDEFINED): alone. */
    MT_MPI(MPI_Info_create(&info));
    MT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD,
                               mt_rank == 0 ? MPI_COMM_TYPE_HW_UNGUIDED
                                            : MPI_UNDEFINED,
                               0, info, &nc));
    if (mt_rank != 0)
        check_null(nc, "MPI_UNDEFINED next to HW_UNGUIDED");
    else if (nc != MPI_COMM_NULL)
        MT_MPI(MPI_Comm_free(&nc));
    MT_MPI(MPI_Info_free(&info));

    MT_MPI(MPI_Comm_free(&shm));
#ifdef MT_HAVE_HWLOC
    hwloc_topology_destroy(s_topo);
#endif
    return mt_finish("split_hw");
}
