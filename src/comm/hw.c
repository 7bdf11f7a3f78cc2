/* SPDX-License-Identifier: MIT */
/* The hardware levels a process's CPU binding lies inside, from hwloc, for
 * MPI_Comm_split_type's MPI_COMM_TYPE_HW_GUIDED and _HW_UNGUIDED (MPI 4.0
 * 7.4.2). The topology is loaded once, at the first use. Without hwloc at
 * build time (FERRY_HAVE_HWLOC unset) no level is known. Not thread safe
 * (the MPI layer serialises calls). */
#include "comm/comm.h"

#include <errno.h>
#include <string.h>

#ifdef FERRY_HAVE_HWLOC
#include <hwloc.h>

static hwloc_topology_t s_topo;
static bool s_loaded, s_failed;

static hwloc_topology_t hw_topo(void)
{
    if (s_loaded || s_failed)
        return s_loaded ? s_topo : NULL;
    if (hwloc_topology_init(&s_topo) != 0) {
        s_failed = true;
        return NULL;
    }
    if (hwloc_topology_load(s_topo) != 0) {
        hwloc_topology_destroy(s_topo);
        s_failed = true;
        return NULL;
    }
    s_loaded = true;
    return s_topo;
}

/* This process's binding (the whole machine when unbound), or NULL. */
static hwloc_bitmap_t hw_binding(hwloc_topology_t t)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set)
        return NULL;
    if (hwloc_get_cpubind(t, set, HWLOC_CPUBIND_PROCESS) != 0 ||
        hwloc_bitmap_iszero(set))
        hwloc_bitmap_copy(set, hwloc_topology_get_topology_cpuset(t));
    return set;
}

/* Colour of the object at 'depth' whose cpuset contains 'bind', or -1.
 * The colour names the node, the depth and the object's logical index,
 * so it is the same at every process that sees that object, and unique. */
static int hw_color_at(hwloc_topology_t t, int depth, hwloc_const_bitmap_t bind,
                       int node)
{
    int n = hwloc_get_nbobjs_by_depth(t, depth);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_depth(t, depth, (unsigned)i);
        if (!o->cpuset || hwloc_bitmap_iszero(o->cpuset) ||
            !hwloc_bitmap_isincluded(bind, o->cpuset))
            continue;
        int slot = depth >= 0 ? depth & 0xf : 0xf; /* NUMA: a virtual depth */
        return (node << 16) | (slot << 12) | (int)(o->logical_index & 0xfff);
    }
    return -1;
}

int fy_hw_guided_color(const char *name, int node, int *color_out)
{
    hwloc_topology_t t = hw_topo();
    if (!t)
        return -ENOTSUP;
    if (strncmp(name, "hwloc://", 8) == 0)
        name += 8;
    hwloc_obj_type_t type;
    union hwloc_obj_attr_u attr;
    if (hwloc_type_sscanf(name, &type, &attr, sizeof(attr)) != 0)
        return -ENOENT;
    hwloc_bitmap_t bind = hw_binding(t);
    if (!bind)
        return -ENOMEM;
    int color = -1;
    int depth = hwloc_get_type_depth(t, type);
    if (depth == HWLOC_TYPE_DEPTH_MULTIPLE) {
        /* Groups at several depths: the deepest one containing us. */
        for (int d = hwloc_topology_get_depth(t) - 1; d >= 0 && color < 0; d--)
            if (hwloc_get_depth_type(t, d) == type)
                color = hw_color_at(t, d, bind, node);
    } else if (depth != HWLOC_TYPE_DEPTH_UNKNOWN) {
        color = hw_color_at(t, depth, bind, node);
    }
    hwloc_bitmap_free(bind);
    *color_out = color < 0 ? MPI_UNDEFINED : color;
    return 0;
}

int fy_hw_levels(int node, struct fy_hw_level *out, int max)
{
    hwloc_topology_t t = hw_topo();
    if (!t)
        return 0;
    hwloc_bitmap_t bind = hw_binding(t);
    if (!bind)
        return 0;
    /* NUMA nodes hang off the tree as memory children: their level goes
     * right below their parents'. */
    int numa_depth = hwloc_get_type_depth(t, HWLOC_OBJ_NUMANODE);
    hwloc_obj_t numa0 = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, 0);
    int numa_after = numa0 && numa0->parent ? numa0->parent->depth : -1;
    int n = 0, depth = hwloc_topology_get_depth(t);
    for (int d = 0; d < depth && n < max; d++) {
        out[n].type = (int)hwloc_get_depth_type(t, d);
        out[n].color = hw_color_at(t, d, bind, node);
        if (out[n].color < 0)
            out[n].color = MPI_UNDEFINED;
        n++;
        if (d == numa_after && numa_depth < 0 && n < max) {
            out[n].type = (int)HWLOC_OBJ_NUMANODE;
            out[n].color = hw_color_at(t, numa_depth, bind, node);
            if (out[n].color < 0)
                out[n].color = MPI_UNDEFINED;
            n++;
        }
    }
    hwloc_bitmap_free(bind);
    return n;
}

const char *fy_hw_type_name(int type)
{
    return hwloc_obj_type_string((hwloc_obj_type_t)type);
}

bool fy_hw_available(void)
{
    return true;
}

void fy_hw_finalize(void)
{
    if (s_loaded)
        hwloc_topology_destroy(s_topo);
    s_loaded = s_failed = false;
}

#else /* !FERRY_HAVE_HWLOC */

int fy_hw_guided_color(const char *name, int node, int *color_out)
{
    (void)name;
    (void)node;
    (void)color_out;
    return -ENOTSUP;
}

int fy_hw_levels(int node, struct fy_hw_level *out, int max)
{
    (void)node;
    (void)out;
    (void)max;
    return 0;
}

const char *fy_hw_type_name(int type)
{
    (void)type;
    return "";
}

bool fy_hw_available(void)
{
    return false;
}

void fy_hw_finalize(void) {}

#endif
