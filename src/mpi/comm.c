/* SPDX-License-Identifier: MIT */
/* Entry points for communicators, groups and communicator attributes:
 * argument checks, then src/comm does the work; internal errors become MPI
 * error classes here. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "boot/boot.h"
#include "coll/coll.h"
#include "coll/shm.h"
#include "mpi/mpi_impl.h"
#include "mpi/request.h"

/* Report a failed constructor: rc < 0 is an errno, rc > 0 the MPI error
 * code an attribute callback returned. */
static int report_rc(struct fy_comm *c, int rc, const char *fn)
    __attribute__((cold, noinline));
static int report_rc(struct fy_comm *c, int rc, const char *fn)
{
    if (rc > 0)
        return fy_mpi_err(c, rc, fn, "an attribute callback returned %d", rc);
    if (rc == -ERANGE)
        return fy_mpi_err(c, MPI_ERR_RANK, fn,
                          "remote_leader is not a rank of peer_comm");
    if (rc == -EXDEV)
        return fy_mpi_err(c, MPI_ERR_COMM, fn,
                          "the local and remote groups overlap");
    if (rc == -ENOSPC)
        return fy_mpi_err(c, MPI_ERR_OTHER, fn,
                          "too many communicators: all %u context ids in "
                          "use (free some with MPI_Comm_free)",
                          FY_CTX_MAX / 2u);
    return fy_mpi_err(c, fy_errno_to_class(rc), fn, "%s", strerror(-rc));
}

#define FY_CHECK_PTR(p, comm, fn)                                              \
    FY_CHECK((p) != NULL, comm, MPI_ERR_ARG, fn, "%s is NULL", #p)

#define FY_GET_GROUP(var, h, comm, fn)                                         \
    struct fy_group *var = fy_group_get(h);                                    \
    if (FY_UNLIKELY(!var))                                                     \
        return fy_mpi_err(comm, MPI_ERR_GROUP, fn, "invalid group 0x%x",       \
                          (unsigned)(h));

static bool is_builtin_comm(MPI_Comm h)
{
    return h == MPI_COMM_WORLD || h == MPI_COMM_SELF;
}

/* ---- communicators --------------------------------------------------- */

FY_API int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    FY_MT_NONE();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    FY_CHECK_PTR(size, c, __func__);
    *size = c->size;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Comm_size)

FY_API int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    FY_MT_NONE();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    FY_CHECK_PTR(rank, c, __func__);
    *rank = c->rank;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Comm_rank)

FY_API int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    FY_CHECK_PTR(newcomm, c, __func__);
    struct fy_comm *nc;
    int rc = fy_comm_dup(c, &nc);
    if (rc != 0)
        return report_rc(c, rc, __func__);
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Comm_dup)

FY_API int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info,
                                   MPI_Comm *newcomm)
{
    FY_MT_ENTER();
    /* Ferry acts on no communicator info key yet. */
    (void)info;
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    FY_CHECK_PTR(newcomm, c, __func__);
    struct fy_comm *nc;
    int rc = fy_comm_dup(c, &nc);
    if (rc != 0)
        return report_rc(c, rc, __func__);
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Comm_dup_with_info)

/* MPI_Comm_idup's request: the duplicate exists from the call on (its
 * handle is returned at once, as MPI 4.0 allows), its context id is agreed
 * by a schedule the progress engine runs, and the request completes when
 * that agreement has finished here. Until then the new communicator must
 * not be used (MPI: erroneous before completion). */
struct fy_idup_req {
    struct fy_mreq_ext x; /* first: the request layer passes &x */
    struct fy_comm *nc;
    struct fy_ctx_agree *ag[FY_IDUP_AGREES];
    /* Referenced until the agreements are freed: an intercommunicator's
     * agreement over both groups reads its group list. */
    struct fy_comm *parent;
};

static void idup_release(struct fy_idup_req *r)
{
    for (int i = 0; i < FY_IDUP_AGREES; i++)
        fy_ctx_agree_free(r->ag[i]);
    fy_comm_release(r->parent);
    free(r);
}

static void idup_progress(struct fy_mreq_ext *x)
{
    struct fy_idup_req *r = (struct fy_idup_req *)x;
    int err;
    if (fy_comm_idup_test(r->nc, r->ag, &err)) {
        x->err = err;
        x->complete = true;
    }
}

static int idup_free(struct fy_mreq_ext *x)
{
    idup_release((struct fy_idup_req *)x);
    return MPI_SUCCESS;
}

static const struct fy_mreq_ext_ops idup_ops = {
    .progress = idup_progress,
    .free = idup_free,
};

static int comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request,
                     const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    FY_CHECK_PTR(newcomm, c, fn);
    FY_CHECK_PTR(request, c, fn);
    struct fy_idup_req *r = calloc(1, sizeof(*r));
    if (!r)
        return fy_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory for a request");
    int rc = fy_comm_idup(c, &r->nc, r->ag);
    if (rc != 0) {
        free(r);
        return report_rc(c, rc, fn);
    }
    fy_comm_retain(c);
    r->parent = c;
    r->x.ops = &idup_ops;
    r->x.comm = c;
    r->x.st_source = MPI_ANY_SOURCE;
    r->x.st_tag = MPI_ANY_TAG;
    *newcomm = r->nc->handle; /* before the request may complete and fail */
    if (fy_mreq_ext_register(&r->x, request) != 0) {
        /* The agreement must still run: the other members need it. */
        int err;
        while (!fy_comm_idup_test(r->nc, r->ag, &err))
            fy_progress();
        if (err == 0)
            fy_comm_free(r->nc);
        idup_release(r);
        *newcomm = MPI_COMM_NULL;
        return fy_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory for a request");
    }
    return MPI_SUCCESS;
}

FY_API int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm,
                          MPI_Request *request)
{
    FY_MT_ENTER();
    return comm_idup(comm, newcomm, request, __func__);
}
FY_ALIAS(MPI_Comm_idup)

FY_API int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info,
                                    MPI_Comm *newcomm, MPI_Request *request)
{
    FY_MT_ENTER();
    /* Ferry acts on no communicator info key yet (as Comm_dup_with_info). */
    (void)info;
    return comm_idup(comm, newcomm, request, __func__);
}
FY_ALIAS(MPI_Comm_idup_with_info)

FY_API int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    FY_CHECK_PTR(newcomm, c, __func__);
    FY_CHECK(color >= 0 || color == MPI_UNDEFINED, c, MPI_ERR_ARG, __func__,
             "color %d is negative (and not MPI_UNDEFINED)", color);
    struct fy_comm *nc;
    int rc = fy_comm_split(c, color, key, &nc);
    if (rc != 0)
        return report_rc(c, rc, __func__);
    *newcomm = nc ? nc->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Comm_split)

/* What each member of a Comm_split_type says (one allgather): its split
 * type and, for MPI_COMM_TYPE_HW_UNGUIDED, its hardware levels. Every
 * split type exchanges it, so that members passing MPI_UNDEFINED, or one
 * of the types, all make the same collective calls. */
struct split_rec {
    int split_type;
    int nlev;
    struct fy_hw_level lev[FY_HW_MAX_LEVELS];
};

/* A member's colour at the level of type 'type', or MPI_UNDEFINED. */
static int rec_color(const struct split_rec *r, int type)
{
    for (int i = 0; i < r->nlev; i++)
        if (r->lev[i].type == type)
            return r->lev[i].color;
    return MPI_UNDEFINED;
}

/* MPI_COMM_TYPE_HW_UNGUIDED (MPI 4.0 7.4.2): the highest level, in the
 * first unguided member's order, at which every unguided member is inside
 * one object and no object holds the whole communicator. The same answer
 * at every member (it reads only the gathered records). Returns the
 * level's type, or -1 when no level splits further. */
static int unguided_level(const struct split_rec *recs, int n)
{
    int first = -1;
    for (int m = 0; m < n && first < 0; m++)
        if (recs[m].split_type == MPI_COMM_TYPE_HW_UNGUIDED)
            first = m;
    if (first < 0)
        return -1;
    for (int i = 0; i < recs[first].nlev; i++) {
        int type = recs[first].lev[i].type;
        bool ok = true;
        for (int m = 0; m < n && ok; m++) {
            if (recs[m].split_type != MPI_COMM_TYPE_HW_UNGUIDED)
                continue;
            int col = rec_color(&recs[m], type), same = 0;
            if (col == MPI_UNDEFINED) {
                ok = false;
                break;
            }
            for (int k = 0; k < n; k++)
                if (recs[k].split_type == MPI_COMM_TYPE_HW_UNGUIDED &&
                    rec_color(&recs[k], type) == col)
                    same++;
            ok = same < n;
        }
        if (ok)
            return type;
    }
    return -1;
}

FY_API int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key,
                                MPI_Info info, MPI_Comm *newcomm)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    FY_CHECK_PTR(newcomm, c, __func__);
    FY_CHECK(info == MPI_INFO_NULL || fy_info_get(info), c, MPI_ERR_INFO,
             __func__, "invalid info object 0x%x", (unsigned)info);
    /* The node: named by its first world rank (every launcher gives each
     * node's ranks, virtual nodes included). */
    int node_color = fy_boot.local_ranks[0];
    int color = MPI_UNDEFINED;
    struct split_rec mine = {.split_type = split_type};
    switch (split_type) {
    case MPI_COMM_TYPE_SHARED:
        /* On an intercommunicator the split is MPI_Comm_split's (MPI
         * 4.0): one intercommunicator of the node's processes of both
         * groups. */
        color = node_color;
        break;
    case MPI_COMM_TYPE_HW_GUIDED: {
        /* MPI 4.0 7.4.2: "mpi_shared_memory" is MPI_COMM_TYPE_SHARED's
         * split; an hwloc type name groups by the object of that type
         * holding our binding (MPI_COMM_NULL if it spans several); an
         * unknown name, or none, gives MPI_COMM_NULL. */
        const char *v =
            info == MPI_INFO_NULL
                ? NULL
                : fy_info_lookup(fy_info_get(info), "mpi_hw_resource_type");
        if (v && strcmp(v, "mpi_shared_memory") == 0)
            color = node_color;
        else if (v && fy_hw_guided_color(v, fy_boot.node, &color) != 0)
            color = MPI_UNDEFINED; /* unknown type, or no hwloc */
        break;
    }
    case MPI_COMM_TYPE_HW_UNGUIDED:
        mine.nlev = fy_hw_levels(fy_boot.node, mine.lev, FY_HW_MAX_LEVELS);
        break;
    case MPI_UNDEFINED:
        break;
    default:
        return fy_mpi_err(c, MPI_ERR_ARG, __func__, "invalid split_type %d",
                          split_type);
    }
    struct fy_comm *grp = c->inter ? c->inter->local : c;
    struct split_rec *recs = malloc((size_t)grp->size * sizeof(*recs));
    /* Not a reason to stop here: the others would wait in the allgather. */
    if (!recs)
        fy_fatal(1, "MPI_Comm_split_type: out of memory for %d ranks",
                 grp->size);
    struct fy_dtype *byte = fy_dtype_get(MPI_BYTE);
    int rc = fy_coll_allgather(&mine, sizeof(mine), byte, recs, sizeof(mine),
                               byte, grp, NULL);
    if (rc == 0 && split_type == MPI_COMM_TYPE_HW_UNGUIDED) {
        int type = unguided_level(recs, grp->size);
        if (type >= 0) {
            color = rec_color(&mine, type);
            if (info != MPI_INFO_NULL &&
                fy_info_put(fy_info_get(info), "mpi_hw_resource_type",
                            fy_hw_type_name(type)) != 0)
                rc = -ENOMEM;
        }
    }
    free(recs);
    if (rc != 0)
        color = MPI_UNDEFINED; /* still join the split below */
    struct fy_comm *nc;
    int src = fy_comm_split(c, color, key, &nc);
    if (rc == 0)
        rc = src;
    else if (src == 0 && nc)
        fy_comm_free(nc);
    if (rc != 0)
        return report_rc(c, rc, __func__);
    *newcomm = nc ? nc->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Comm_split_type)

/* Whether every member of g is in c's group. */
static bool group_within(struct fy_group *g, struct fy_comm *c)
{
    for (int i = 0; i < g->size; i++)
        if (fy_group_rank_of_world(c->group, g->world[i]) == MPI_UNDEFINED)
            return false;
    return true;
}

FY_API int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    FY_GET_GROUP(g, group, c, __func__);
    FY_CHECK_PTR(newcomm, c, __func__);
    FY_CHECK(group_within(g, c), c, MPI_ERR_GROUP, __func__,
             "group has processes that are not in the communicator");
    struct fy_comm *nc;
    int rc = fy_comm_create_from_group(c, g, &nc);
    if (rc != 0)
        return report_rc(c, rc, __func__);
    *newcomm = nc ? nc->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Comm_create)

FY_API int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                                  MPI_Comm *newcomm)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    FY_GET_GROUP(g, group, c, __func__);
    FY_CHECK_PTR(newcomm, c, __func__);
    FY_CHECK_INTRA(c, __func__);
    FY_CHECK(tag >= 0, c, MPI_ERR_TAG, __func__, "invalid tag %d", tag);
    FY_CHECK(group_within(g, c), c, MPI_ERR_GROUP, __func__,
             "group has processes that are not in the communicator");
    if (g->rank == MPI_UNDEFINED) {
        /* Non-members may call it and get MPI_COMM_NULL, taking no part. */
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    struct fy_comm *nc;
    int rc = fy_comm_create_group(c, g, tag, &nc);
    if (rc != 0)
        return report_rc(c, rc, __func__);
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Comm_create_group)

static int comm_free(MPI_Comm *comm, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_CHECK_PTR(comm, NULL, fn);
    FY_GET_COMM(c, *comm, fn);
    FY_CHECK(!is_builtin_comm(*comm), c, MPI_ERR_COMM, fn, "cannot free %s",
             c->name);
    /* Our last shared-memory publications on c must be read before its
     * context can name another communicator's. */
    fy_coll_shm_comm_free(c);
    if (c->inter) /* its local part dies with it */
        fy_coll_shm_comm_free(c->inter->local);
    int rc = fy_comm_free(c);
    if (rc != 0)
        return fy_mpi_err(c, rc, fn, "an attribute delete callback returned %d",
                          rc);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

FY_API int PMPI_Comm_free(MPI_Comm *comm)
{
    FY_MT_ENTER();
    return comm_free(comm, __func__);
}
FY_ALIAS(MPI_Comm_free)

FY_API int PMPI_Comm_disconnect(MPI_Comm *comm)
{
    FY_MT_ENTER();
    return comm_free(comm, __func__);
}
FY_ALIAS(MPI_Comm_disconnect)

FY_API int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(a, comm1, __func__);
    FY_GET_COMM(b, comm2, __func__);
    FY_CHECK_PTR(result, a, __func__);
    *result = fy_comm_compare(a, b);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Comm_compare)

FY_API int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    FY_MT_OBJ();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    FY_CHECK_PTR(group, c, __func__);
    /* Handles name objects: the user's handle is one more reference to
     * the communicator's own group. */
    fy_group_retain(c->group);
    *group = c->group->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Comm_group)

FY_API int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    FY_CHECK_PTR(comm_name, c, __func__);
    /* MPI: longer names are truncated. */
    strncpy(c->name, comm_name, sizeof(c->name) - 1);
    c->name[sizeof(c->name) - 1] = '\0';
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Comm_set_name)

FY_API int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    FY_CHECK_PTR(comm_name, c, __func__);
    FY_CHECK_PTR(resultlen, c, __func__);
    size_t n = strlen(c->name);
    memcpy(comm_name, c->name, n + 1);
    *resultlen = (int)n;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Comm_get_name)

FY_API int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    FY_MT_NONE();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    FY_CHECK_PTR(flag, c, __func__);
    *flag = fy_comm_is_inter(c);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Comm_test_inter)

#define CHECK_INTER(c, fn)                                                     \
    FY_CHECK(fy_comm_is_inter(c), c, MPI_ERR_COMM, fn,                         \
             "%s is not an intercommunicator",                                 \
             (c)->name[0] ? (c)->name : "comm")

FY_API int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    FY_MT_NONE();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    CHECK_INTER(c, __func__);
    FY_CHECK_PTR(size, c, __func__);
    *size = c->inter->remote->size;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Comm_remote_size)

FY_API int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    FY_MT_OBJ();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    CHECK_INTER(c, __func__);
    FY_CHECK_PTR(group, c, __func__);
    fy_group_retain(c->inter->remote);
    *group = c->inter->remote->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Comm_remote_group)

/* ---- groups ---------------------------------------------------------- */

FY_API int PMPI_Group_size(MPI_Group group, int *size)
{
    FY_MT_NONE();
    FY_CHECK_INIT(__func__);
    FY_GET_GROUP(g, group, NULL, __func__);
    FY_CHECK_PTR(size, NULL, __func__);
    *size = g->size;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Group_size)

FY_API int PMPI_Group_rank(MPI_Group group, int *rank)
{
    FY_MT_NONE();
    FY_CHECK_INIT(__func__);
    FY_GET_GROUP(g, group, NULL, __func__);
    FY_CHECK_PTR(rank, NULL, __func__);
    *rank = g->rank;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Group_rank)

FY_API int PMPI_Group_free(MPI_Group *group)
{
    FY_MT_OBJ();
    FY_CHECK_INIT(__func__);
    FY_CHECK_PTR(group, NULL, __func__);
    FY_GET_GROUP(g, *group, NULL, __func__);
    fy_group_release(g); /* MPI_GROUP_EMPTY: nothing to do */
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Group_free)

/* Check n ranks of g: in range and (when 'distinct') all different. */
static int check_ranks(struct fy_group *g, int n, const int *ranks,
                       const char *fn)
{
    FY_CHECK(n >= 0 && n <= g->size, NULL, MPI_ERR_ARG, fn,
             "n = %d is not in [0, %d]", n, g->size);
    if (n == 0)
        return MPI_SUCCESS;
    FY_CHECK_PTR(ranks, NULL, fn);
    bool *seen = calloc((size_t)g->size, sizeof(bool));
    if (!seen)
        return fy_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    for (int i = 0; i < n; i++) {
        int r = ranks[i];
        if (r < 0 || r >= g->size || seen[r]) {
            free(seen);
            return fy_mpi_err(NULL, MPI_ERR_RANK, fn,
                              r < 0 || r >= g->size
                                  ? "ranks[%d] = %d is not in the group"
                                  : "ranks[%d] = %d appears twice",
                              i, r);
        }
        seen[r] = true;
    }
    free(seen);
    return MPI_SUCCESS;
}

/* Finish a group constructor: 'rc' is its result, *ng its output. */
static int new_group(int rc, struct fy_group **ng, MPI_Group *newgroup,
                     const char *fn)
{
    if (rc != 0)
        return fy_mpi_err(NULL, fy_errno_to_class(rc), fn,
                          "out of memory for a group");
    *newgroup = (*ng)->handle;
    return MPI_SUCCESS;
}

FY_API int PMPI_Group_incl(MPI_Group group, int n, const int ranks[],
                           MPI_Group *newgroup)
{
    FY_MT_OBJ();
    FY_CHECK_INIT(__func__);
    FY_GET_GROUP(g, group, NULL, __func__);
    FY_CHECK_PTR(newgroup, NULL, __func__);
    int rc = check_ranks(g, n, ranks, __func__);
    if (rc != MPI_SUCCESS)
        return rc;
    struct fy_group *ng = NULL;
    rc = fy_group_incl(g, n, ranks, &ng);
    return new_group(rc, &ng, newgroup, __func__);
}
FY_ALIAS(MPI_Group_incl)

FY_API int PMPI_Group_excl(MPI_Group group, int n, const int ranks[],
                           MPI_Group *newgroup)
{
    FY_MT_OBJ();
    FY_CHECK_INIT(__func__);
    FY_GET_GROUP(g, group, NULL, __func__);
    FY_CHECK_PTR(newgroup, NULL, __func__);
    int rc = check_ranks(g, n, ranks, __func__);
    if (rc != MPI_SUCCESS)
        return rc;
    struct fy_group *ng = NULL;
    rc = fy_group_excl(g, n, ranks, &ng);
    return new_group(rc, &ng, newgroup, __func__);
}
FY_ALIAS(MPI_Group_excl)

/* Expand (first, last, stride) triples into a rank list, checking each
 * triple. *out is malloc'ed; returns MPI_SUCCESS or a reported class. */
static int expand_ranges(struct fy_group *g, int n, int ranges[][3], int **out,
                         int *nout, const char *fn)
{
    FY_CHECK(n >= 0, NULL, MPI_ERR_ARG, fn, "n = %d is negative", n);
    FY_CHECK(n == 0 || ranges != NULL, NULL, MPI_ERR_ARG, fn, "ranges is NULL");
    long long total = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        FY_CHECK(stride != 0, NULL, MPI_ERR_ARG, fn, "ranges[%d] has stride 0",
                 i);
        FY_CHECK(first >= 0 && first < g->size && last >= 0 && last < g->size,
                 NULL, MPI_ERR_RANK, fn,
                 "ranges[%d] = (%d, %d, %d) leaves the group of size %d", i,
                 first, last, stride, g->size);
        FY_CHECK((last - first) / stride >= 0, NULL, MPI_ERR_ARG, fn,
                 "ranges[%d] = (%d, %d, %d): stride goes the wrong way", i,
                 first, last, stride);
        total += (last - first) / stride + 1;
    }
    FY_CHECK(total <= g->size, NULL, MPI_ERR_RANK, fn,
             "ranges name %lld ranks, more than the group's %d", total,
             g->size);
    int *r = malloc((size_t)FY_MAX(total, 1) * sizeof(int));
    if (!r)
        return fy_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    int m = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        int steps = (last - first) / stride;
        for (int k = 0; k <= steps; k++)
            r[m++] = first + k * stride;
    }
    int rc = check_ranks(g, m, r, fn); /* catches overlapping triples */
    if (rc != MPI_SUCCESS) {
        free(r);
        return rc;
    }
    *out = r;
    *nout = m;
    return MPI_SUCCESS;
}

FY_API int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3],
                                 MPI_Group *newgroup)
{
    FY_MT_OBJ();
    FY_CHECK_INIT(__func__);
    FY_GET_GROUP(g, group, NULL, __func__);
    FY_CHECK_PTR(newgroup, NULL, __func__);
    int *r, m;
    int rc = expand_ranges(g, n, ranges, &r, &m, __func__);
    if (rc != MPI_SUCCESS)
        return rc;
    struct fy_group *ng = NULL;
    rc = fy_group_incl(g, m, r, &ng);
    rc = new_group(rc, &ng, newgroup, __func__);
    free(r);
    return rc;
}
FY_ALIAS(MPI_Group_range_incl)

FY_API int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3],
                                 MPI_Group *newgroup)
{
    FY_MT_OBJ();
    FY_CHECK_INIT(__func__);
    FY_GET_GROUP(g, group, NULL, __func__);
    FY_CHECK_PTR(newgroup, NULL, __func__);
    int *r, m;
    int rc = expand_ranges(g, n, ranges, &r, &m, __func__);
    if (rc != MPI_SUCCESS)
        return rc;
    struct fy_group *ng = NULL;
    rc = fy_group_excl(g, m, r, &ng);
    rc = new_group(rc, &ng, newgroup, __func__);
    free(r);
    return rc;
}
FY_ALIAS(MPI_Group_range_excl)

FY_API int PMPI_Group_translate_ranks(MPI_Group group1, int n,
                                      const int ranks1[], MPI_Group group2,
                                      int ranks2[])
{
    FY_MT_OBJ();
    FY_CHECK_INIT(__func__);
    FY_GET_GROUP(a, group1, NULL, __func__);
    FY_GET_GROUP(b, group2, NULL, __func__);
    FY_CHECK(n >= 0, NULL, MPI_ERR_ARG, __func__, "n = %d is negative", n);
    if (n == 0)
        return MPI_SUCCESS;
    FY_CHECK_PTR(ranks1, NULL, __func__);
    FY_CHECK_PTR(ranks2, NULL, __func__);
    for (int i = 0; i < n; i++)
        FY_CHECK((ranks1[i] >= 0 && ranks1[i] < a->size) ||
                     ranks1[i] == MPI_PROC_NULL,
                 NULL, MPI_ERR_RANK, __func__,
                 "ranks1[%d] = %d is not in group1 (size %d)", i, ranks1[i],
                 a->size);
    if (fy_group_translate(a, n, ranks1, b, ranks2) != 0)
        return fy_mpi_err(NULL, MPI_ERR_NO_MEM, __func__, "out of memory");
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Group_translate_ranks)

FY_API int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    FY_MT_OBJ();
    FY_CHECK_INIT(__func__);
    FY_GET_GROUP(a, group1, NULL, __func__);
    FY_GET_GROUP(b, group2, NULL, __func__);
    FY_CHECK_PTR(result, NULL, __func__);
    *result = fy_group_compare(a, b);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Group_compare)

typedef int (*group_setop_fn)(struct fy_group *, struct fy_group *,
                              struct fy_group **);

static int group_setop(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup,
                       group_setop_fn op, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_GROUP(a, group1, NULL, fn);
    FY_GET_GROUP(b, group2, NULL, fn);
    FY_CHECK_PTR(newgroup, NULL, fn);
    struct fy_group *ng = NULL;
    int rc = op(a, b, &ng);
    return new_group(rc, &ng, newgroup, fn);
}

FY_API int PMPI_Group_union(MPI_Group group1, MPI_Group group2,
                            MPI_Group *newgroup)
{
    FY_MT_OBJ();
    return group_setop(group1, group2, newgroup, fy_group_union, __func__);
}
FY_ALIAS(MPI_Group_union)

FY_API int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2,
                                   MPI_Group *newgroup)
{
    FY_MT_OBJ();
    return group_setop(group1, group2, newgroup, fy_group_intersection,
                       __func__);
}
FY_ALIAS(MPI_Group_intersection)

FY_API int PMPI_Group_difference(MPI_Group group1, MPI_Group group2,
                                 MPI_Group *newgroup)
{
    FY_MT_OBJ();
    return group_setop(group1, group2, newgroup, fy_group_difference, __func__);
}
FY_ALIAS(MPI_Group_difference)

/* ---- Cartesian topologies -------------------------------------------- */

/* Resolve a communicator that must carry a Cartesian topology. */
#define GET_CART(var, h, fn)                                                   \
    FY_GET_COMM(var, h, fn);                                                   \
    FY_CHECK(var->topo != NULL && var->topo->kind == FY_TOPO_CART, var,        \
             MPI_ERR_TOPOLOGY, fn, "communicator has no Cartesian topology")

FY_API int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[],
                            const int periods[], int reorder,
                            MPI_Comm *comm_cart)
{
    FY_MT_ENTER();
    (void)reorder; /* one node: no placement is better than another */
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm_old, __func__);
    FY_CHECK_PTR(comm_cart, c, __func__);
    *comm_cart = MPI_COMM_NULL; /* what a failed call leaves (as MPICH) */
    FY_CHECK(ndims >= 0, c, MPI_ERR_DIMS, __func__, "ndims %d is negative",
             ndims);
    FY_CHECK(ndims == 0 || (dims && periods), c, MPI_ERR_ARG, __func__,
             "%s is NULL", dims ? "periods" : "dims");
    long long n = 1;
    for (int d = 0; d < ndims; d++) {
        FY_CHECK(dims[d] > 0, c, MPI_ERR_DIMS, __func__,
                 "dims[%d] = %d is not positive", d, dims[d]);
        n *= dims[d];
        FY_CHECK(n <= c->size, c, MPI_ERR_DIMS, __func__,
                 "the grid needs more than the %d processes of comm_old",
                 c->size);
    }
    struct fy_comm *nc = NULL;
    int rc = fy_cart_create(c, ndims, dims, periods, &nc);
    if (rc != 0)
        return report_rc(c, rc, __func__);
    *comm_cart = nc ? nc->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Cart_create)

FY_API int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[],
                         MPI_Comm *newcomm)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    GET_CART(c, comm, __func__);
    FY_CHECK_PTR(newcomm, c, __func__);
    *newcomm = MPI_COMM_NULL; /* what a failed call leaves */
    FY_CHECK(c->topo->ndims == 0 || remain_dims, c, MPI_ERR_ARG, __func__,
             "remain_dims is NULL");
    struct fy_comm *nc;
    int rc = fy_cart_sub(c, remain_dims, &nc);
    if (rc != 0)
        return report_rc(c, rc, __func__);
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Cart_sub)

FY_API int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    GET_CART(c, comm, __func__);
    FY_CHECK_PTR(ndims, c, __func__);
    *ndims = c->topo->ndims;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Cartdim_get)

FY_API int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[],
                         int coords[])
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    GET_CART(c, comm, __func__);
    const struct fy_topo *t = c->topo;
    FY_CHECK(maxdims >= 0, c, MPI_ERR_ARG, __func__, "maxdims %d is negative",
             maxdims);
    int n = FY_MIN(maxdims, t->ndims);
    FY_CHECK(n == 0 || (dims && periods && coords), c, MPI_ERR_ARG, __func__,
             "an output array is NULL");
    int *all = malloc((size_t)FY_MAX(t->ndims, 1) * sizeof(int));
    if (!all)
        return fy_mpi_err(c, MPI_ERR_NO_MEM, __func__, "out of memory");
    fy_cart_coords(t, c->rank, all);
    for (int d = 0; d < n; d++) {
        dims[d] = t->dims[d];
        periods[d] = t->periods[d];
        coords[d] = all[d];
    }
    free(all);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Cart_get)

FY_API int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    GET_CART(c, comm, __func__);
    const struct fy_topo *t = c->topo;
    FY_CHECK(rank >= 0 && rank < c->size, c, MPI_ERR_RANK, __func__,
             "rank %d is not in [0, %d)", rank, c->size);
    FY_CHECK(maxdims >= t->ndims, c, MPI_ERR_ARG, __func__,
             "maxdims %d is less than the %d dimensions", maxdims, t->ndims);
    FY_CHECK(t->ndims == 0 || coords, c, MPI_ERR_ARG, __func__,
             "coords is NULL");
    fy_cart_coords(t, rank, coords);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Cart_coords)

FY_API int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    GET_CART(c, comm, __func__);
    FY_CHECK_PTR(rank, c, __func__);
    const struct fy_topo *t = c->topo;
    FY_CHECK(t->ndims == 0 || coords, c, MPI_ERR_ARG, __func__,
             "coords is NULL");
    int *w = malloc((size_t)FY_MAX(t->ndims, 1) * sizeof(int));
    if (!w)
        return fy_mpi_err(c, MPI_ERR_NO_MEM, __func__, "out of memory");
    for (int d = 0; d < t->ndims; d++) {
        int x = coords[d], n = t->dims[d];
        if (t->periods[d]) {
            x %= n;
            if (x < 0)
                x += n;
        } else if (x < 0 || x >= n) {
            free(w);
            return fy_mpi_err(c, MPI_ERR_RANK, __func__,
                              "coords[%d] = %d is outside the non-periodic "
                              "dimension of size %d",
                              d, coords[d], n);
        }
        w[d] = x;
    }
    *rank = fy_cart_rank(t, w);
    free(w);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Cart_rank)

FY_API int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp,
                           int *rank_source, int *rank_dest)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    GET_CART(c, comm, __func__);
    FY_CHECK_PTR(rank_source, c, __func__);
    FY_CHECK_PTR(rank_dest, c, __func__);
    const struct fy_topo *t = c->topo;
    FY_CHECK(direction >= 0 && direction < t->ndims, c, MPI_ERR_ARG, __func__,
             "direction %d is not in [0, %d)", direction, t->ndims);
    int *w = malloc((size_t)t->ndims * sizeof(int));
    if (!w)
        return fy_mpi_err(c, MPI_ERR_NO_MEM, __func__, "out of memory");
    int n = t->dims[direction];
    fy_cart_coords(t, c->rank, w);
    int me = w[direction];
    int out[2];
    const int shift[2] = {-disp, disp}; /* source, destination */
    for (int k = 0; k < 2; k++) {
        long long x = (long long)me + shift[k];
        if (t->periods[direction]) {
            x %= n;
            if (x < 0)
                x += n;
        } else if (x < 0 || x >= n) {
            out[k] = MPI_PROC_NULL;
            continue;
        }
        w[direction] = (int)x;
        out[k] = fy_cart_rank(t, w);
    }
    free(w);
    *rank_source = out[0];
    *rank_dest = out[1];
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Cart_shift)

FY_API int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    FY_MT_NONE();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    FY_CHECK_PTR(status, c, __func__);
    *status = c->topo ? (int)c->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Topo_test)

FY_API int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    FY_MT_NONE();
    FY_CHECK_INIT(__func__);
    FY_CHECK(nnodes > 0, NULL, MPI_ERR_ARG, __func__,
             "nnodes %d is not positive", nnodes);
    FY_CHECK(ndims >= 0, NULL, MPI_ERR_DIMS, __func__, "ndims %d is negative",
             ndims);
    FY_CHECK(ndims == 0 || dims, NULL, MPI_ERR_ARG, __func__, "dims is NULL");
    for (int d = 0; d < ndims; d++)
        FY_CHECK(dims[d] >= 0, NULL, MPI_ERR_DIMS, __func__,
                 "dims[%d] = %d is negative", d, dims[d]);
    int rc = fy_dims_create(nnodes, ndims, dims);
    if (rc == -EINVAL)
        return fy_mpi_err(NULL, MPI_ERR_DIMS, __func__,
                          "%d processes cannot fill the fixed dims given",
                          nnodes);
    if (rc != 0)
        return report_rc(NULL, rc, __func__);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Dims_create)

/* ---- intercommunicators -------------------------------------------------
 * MPI 4.0 7.6: src/comm/inter.c does the work. */

FY_API int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader,
                                 MPI_Comm peer_comm, int remote_leader, int tag,
                                 MPI_Comm *newintercomm)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, local_comm, fn);
    FY_CHECK_PTR(newintercomm, c, fn);
    *newintercomm = MPI_COMM_NULL;
    FY_CHECK_INTRA(c, fn);
    FY_CHECK(local_leader >= 0 && local_leader < c->size, c, MPI_ERR_RANK, fn,
             "local_leader %d is not a rank of local_comm (size %d)",
             local_leader, c->size);
    FY_CHECK(tag >= 0, c, MPI_ERR_TAG, fn, "invalid tag %d", tag);
    /* peer_comm and remote_leader matter at the local leader only. */
    struct fy_comm *peer = NULL;
    if (c->rank == local_leader) {
        peer = fy_comm_get(peer_comm);
        FY_CHECK(peer != NULL, c, MPI_ERR_COMM, fn,
                 "invalid peer_comm 0x%x at the local leader",
                 (unsigned)peer_comm);
    }
    struct fy_comm *nc;
    int rc =
        fy_intercomm_create(c, local_leader, peer, remote_leader, tag, &nc);
    if (rc != 0)
        return report_rc(c, rc, fn);
    *newintercomm = nc->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Intercomm_create)

FY_API int PMPI_Intercomm_merge(MPI_Comm intercomm, int high,
                                MPI_Comm *newintracomm)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, intercomm, fn);
    FY_CHECK_PTR(newintracomm, c, fn);
    CHECK_INTER(c, fn);
    struct fy_comm *nc;
    int rc = fy_intercomm_merge(c, high != 0, &nc);
    if (rc != 0)
        return report_rc(c, rc, fn);
    *newintracomm = nc->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Intercomm_merge)

/* ---- info hints -----------------------------------------------------------
 * Ferry takes no communicator hints, and MPI lets an implementation ignore
 * them: the info object is checked and dropped, and MPI_Comm_get_info
 * (src/mpi/info.c) returns an empty one. */

FY_API int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    FY_CHECK(fy_info_get(info) != NULL, c, MPI_ERR_INFO, fn,
             "invalid info object 0x%x", (unsigned)info);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Comm_set_info)

/* ---- graph topology weights ------------------------------------------------
 * Distinct addresses MPI programs pass as weights; never dereferenced. */

static int s_unweighted, s_weights_empty;
FY_API int *const MPI_UNWEIGHTED = &s_unweighted;
FY_API int *const MPI_WEIGHTS_EMPTY = &s_weights_empty;
