/* SPDX-License-Identifier: MIT */
/* Unit test of src/comm and the error-class mapping, in one process
 * without MPI_Init: the world/self communicators fy_comm_init builds (as
 * rank 3 of 8), group set operations, translation and comparison,
 * attributes with copy/delete callbacks and their reference counting,
 * error handler objects, MPI_Dims_create's factorisation, Cartesian
 * rank/coordinate mapping and fy_errno_to_class. Nothing here talks to
 * another process (collective constructors are covered by tests/mpi). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "harness.h"
#include "mpi/mpi_impl.h"

static bool same(const struct fy_group *g, int n, const int *world)
{
    return g->size == n &&
           (n == 0 || memcmp(g->world, world, (size_t)n * sizeof(int)) == 0);
}

static void test_builtins(void)
{
    struct fy_comm *w = fy_comm_get(MPI_COMM_WORLD);
    struct fy_comm *s = fy_comm_get(MPI_COMM_SELF);
    TAP_OK(w && s, "world and self resolve");
    TAP_EQ_INT(w->size, 8, "world size");
    TAP_EQ_INT(w->rank, 3, "world rank");
    TAP_EQ_INT(w->ctx, FY_CTX_WORLD, "world context");
    TAP_EQ_INT(s->size, 1, "self size");
    TAP_EQ_INT(s->rank, 0, "self rank");
    TAP_EQ_INT(fy_comm_world_rank(s, 0), 3, "self's member is world rank 3");
    TAP_EQ_INT(s->ctx, FY_CTX_SELF, "self context");
    TAP_EQ_STR(w->name, "MPI_COMM_WORLD", "world name");
    TAP_OK(fy_comm_get(MPI_COMM_NULL) == NULL, "MPI_COMM_NULL is invalid");
    TAP_OK(fy_group_get(MPI_GROUP_EMPTY) == &fy_group_empty,
           "MPI_GROUP_EMPTY resolves");
    TAP_OK(fy_group_get(MPI_GROUP_NULL) == NULL, "MPI_GROUP_NULL is invalid");
    TAP_EQ_INT(fy_comm_compare(w, w), MPI_IDENT, "world IDENT world");
    TAP_EQ_INT(fy_comm_compare(w, s), MPI_UNEQUAL, "world UNEQUAL self");
}

static void test_groups(void)
{
    struct fy_comm *w = fy_comm_get(MPI_COMM_WORLD);
    struct fy_group *all = w->group, *g, *h, *u;

    const int pick[] = {5, 3, 1};
    TAP_EQ_INT(fy_group_incl(all, 3, pick, &g), 0, "incl");
    TAP_OK(same(g, 3, (int[]){5, 3, 1}), "incl keeps the given order");
    TAP_EQ_INT(g->rank, 1, "world rank 3 is rank 1 of {5,3,1}");
    TAP_OK(g->handle != MPI_GROUP_NULL && fy_group_get(g->handle) == g,
           "new group has a working handle");

    TAP_EQ_INT(fy_group_excl(all, 3, pick, &h), 0, "excl");
    TAP_OK(same(h, 5, (int[]){0, 2, 4, 6, 7}), "excl keeps group order");
    TAP_EQ_INT(h->rank, MPI_UNDEFINED, "excluded process has no rank");

    TAP_EQ_INT(fy_group_union(g, h, &u), 0, "union");
    TAP_OK(same(u, 8, (int[]){5, 3, 1, 0, 2, 4, 6, 7}),
           "union: first group, then the rest of the second");
    TAP_EQ_INT(fy_group_compare(u, all), MPI_SIMILAR,
               "same members, other order: SIMILAR");
    TAP_EQ_INT(fy_group_compare(all, all), MPI_IDENT, "IDENT");
    TAP_EQ_INT(fy_group_compare(g, h), MPI_UNEQUAL, "UNEQUAL");
    fy_group_release(u);

    TAP_EQ_INT(fy_group_intersection(all, g, &u), 0, "intersection");
    TAP_OK(same(u, 3, (int[]){1, 3, 5}), "intersection in the first's order");
    fy_group_release(u);

    TAP_EQ_INT(fy_group_difference(g, h, &u), 0, "difference");
    TAP_OK(same(u, 3, (int[]){5, 3, 1}), "difference of disjoint groups");
    fy_group_release(u);

    TAP_EQ_INT(fy_group_intersection(g, h, &u), 0, "empty intersection");
    TAP_OK(u == &fy_group_empty, "an empty result is MPI_GROUP_EMPTY");
    fy_group_release(u);

    int in[] = {0, 1, 2, MPI_PROC_NULL}, out[4];
    TAP_EQ_INT(fy_group_translate(g, 4, in, all, out), 0, "translate");
    TAP_OK(out[0] == 5 && out[1] == 3 && out[2] == 1,
           "g's ranks in the world group");
    TAP_EQ_INT(out[3], MPI_PROC_NULL, "MPI_PROC_NULL maps to itself");
    TAP_EQ_INT(fy_group_translate(g, 1, in, h, out), 0, "translate");
    TAP_EQ_INT(out[0], MPI_UNDEFINED, "world 5 is not in h");
    TAP_EQ_INT(fy_group_rank_of_world(h, 7), 4, "rank of world 7 in h");

    fy_group_release(g);
    fy_group_release(h);
}

static int n_copy, n_delete;

static int copy_cb(MPI_Comm comm, int keyval, void *extra, void *in, void *out,
                   int *flag)
{
    (void)comm;
    (void)keyval;
    n_copy++;
    *(void **)out = (char *)in + (intptr_t)extra;
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_cb(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    n_delete++;
    return (intptr_t)val == 666 ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static void test_attrs(void)
{
    struct fy_comm *w = fy_comm_get(MPI_COMM_WORLD);
    struct fy_comm *s = fy_comm_get(MPI_COMM_SELF);
    struct fy_keyval *kv;
    void *v = NULL;
    bool found;

    int *tag_ub = fy_attr_predefined(MPI_TAG_UB);
    TAP_OK(tag_ub && *tag_ub >= 32767, "MPI_TAG_UB is at least 32767");
    TAP_EQ_INT(*fy_attr_predefined(MPI_UNIVERSE_SIZE), 8, "universe size");
    TAP_OK(fy_attr_predefined(12345) == NULL, "not a predefined keyval");

    TAP_EQ_INT(
        fy_keyval_create(FY_ATTR_COMM, copy_cb, delete_cb, (void *)1, &kv), 0,
        "create keyval");
    TAP_OK(fy_keyval_get(kv->handle, FY_ATTR_COMM) == kv,
           "keyval handle resolves");
    TAP_OK(fy_keyval_get(kv->handle, FY_ATTR_TYPE) == NULL,
           "a communicator keyval is not a datatype keyval");
    TAP_EQ_INT(fy_attr_set(&w->attrs, w->handle, kv, (void *)100), 0, "set");
    TAP_OK(fy_attr_get(&w->attrs, kv, &v) && v == (void *)100,
           "get what was set");
    TAP_EQ_INT(fy_attr_set(&w->attrs, w->handle, kv, (void *)200), 0,
               "set again");
    TAP_EQ_INT(n_delete, 1, "replacing runs the old value's delete callback");
    TAP_EQ_INT(fy_attr_copy_all(&w->attrs, w->handle, &s->attrs, s->handle), 0,
               "copy callbacks (as in dup)");
    TAP_OK(n_copy == 1 && fy_attr_get(&s->attrs, kv, &v) && v == (void *)201,
           "copy callback's value lands on the copy");

    int handle = kv->handle;
    fy_keyval_free(kv);
    TAP_OK(fy_keyval_get(handle, FY_ATTR_COMM) == NULL,
           "freed keyval handle is invalid");
    TAP_OK(fy_attr_get(&w->attrs, kv, &v) && v == (void *)200,
           "attribute outlives its keyval handle");
    struct fy_keyval *kv2;
    TAP_EQ_INT(fy_keyval_create(FY_ATTR_COMM, NULL, NULL, NULL, &kv2), 0,
               "create another keyval");
    TAP_OK(kv2->handle != handle,
           "a freed keyval still in use keeps its handle");
    fy_keyval_free(kv2);

    TAP_EQ_INT(fy_attr_set(&s->attrs, s->handle, kv, (void *)666), 0,
               "set a value whose delete fails");
    TAP_EQ_INT(n_delete, 2, "old value deleted");
    TAP_EQ_INT(fy_attr_delete(&s->attrs, s->handle, kv, &found), MPI_ERR_OTHER,
               "failing delete callback's code is returned");
    TAP_OK(found && fy_attr_get(&s->attrs, kv, &v), "and the attribute stays");
    TAP_EQ_INT(fy_attr_set(&s->attrs, s->handle, kv, (void *)1), MPI_ERR_OTHER,
               "replacing it fails the same way");
    s->attrs->val = (void *)7; /* let it go */
    TAP_EQ_INT(fy_attr_delete(&s->attrs, s->handle, kv, &found), 0, "delete");
    TAP_OK(found && !fy_attr_get(&s->attrs, kv, &v), "deleted");
    TAP_EQ_INT(fy_attr_delete(&w->attrs, w->handle, kv, &found), 0,
               "last attribute deleted");
    /* 100 and 201 replaced, 666 refused twice, then 7 and 200 deleted. */
    TAP_EQ_INT(n_delete, 6, "every delete callback call counted");
}

static void test_errhandlers(void)
{
    struct fy_errhandler *f = fy_errhandler_get(MPI_ERRORS_ARE_FATAL);
    struct fy_errhandler *r = fy_errhandler_get(MPI_ERRORS_RETURN);
    struct fy_errhandler *a = fy_errhandler_get(MPI_ERRORS_ABORT);
    TAP_OK(f && r && a, "predefined handlers resolve");
    TAP_OK(fy_errhandler_get(0x54000002) == NULL,
           "MPICH's unused builtin slot is invalid");
    TAP_OK(fy_errhandler_get(MPI_ERRHANDLER_NULL) == NULL,
           "MPI_ERRHANDLER_NULL is invalid");
    struct fy_comm *w = fy_comm_get(MPI_COMM_WORLD);
    TAP_EQ_INT(w->errhandler, MPI_ERRORS_ARE_FATAL, "default is fatal");
    fy_comm_set_errhandler(w, r);
    TAP_EQ_INT(w->errhandler, MPI_ERRORS_RETURN, "set");
    TAP_EQ_INT(fy_mpi_err(w, MPI_ERR_RANK, "PMPI_Send", "rank %d", 9),
               MPI_ERR_RANK, "MPI_ERRORS_RETURN returns the class");
    char s[MPI_MAX_ERROR_STRING];
    int len;
    TAP_EQ_INT(PMPI_Error_string(MPI_ERR_RANK, s, &len), MPI_SUCCESS,
               "Error_string");
    TAP_OK(strcmp(s, "Invalid rank (MPI_ERR_RANK)") == 0,
           "the string depends on the code alone, no stale detail: %s", s);
    TAP_EQ_INT((int)strlen(s), len, "resultlen");
    int cls;
    TAP_EQ_INT(PMPI_Error_class(MPI_ERR_TRUNCATE, &cls), MPI_SUCCESS,
               "Error_class");
    TAP_EQ_INT(cls, MPI_ERR_TRUNCATE, "a class is its own class");
    for (int c = 0; c <= MPI_T_ERR_NOT_SUPPORTED; c++)
        if (c != 54 && PMPI_Error_string(c, s, &len) != MPI_SUCCESS)
            TAP_OK(false, "Error_string(%d)", c);
    TAP_OK(true, "Error_string knows every class");
    fy_comm_set_errhandler(w, f);
}

static void test_errno(void)
{
    TAP_EQ_INT(fy_errno_to_class(-EMSGSIZE), MPI_ERR_TRUNCATE, "EMSGSIZE");
    TAP_EQ_INT(fy_errno_to_class(-ENOMEM), MPI_ERR_NO_MEM, "ENOMEM");
    TAP_EQ_INT(fy_errno_to_class(-EINVAL), MPI_ERR_ARG, "EINVAL");
    TAP_EQ_INT(fy_errno_to_class(-ECANCELED), MPI_SUCCESS, "ECANCELED");
    TAP_EQ_INT(fy_errno_to_class(-ENOSPC), MPI_ERR_OTHER, "ENOSPC");
    TAP_EQ_INT(fy_errno_to_class(-EPIPE), MPI_ERR_OTHER, "EPIPE");
    TAP_EQ_INT(fy_errno_to_class(-EIO), MPI_ERR_OTHER, "EIO");
    TAP_EQ_INT(fy_errclass_name(MPI_ERR_RANK)[8], 'R', "class names");
}

static void test_dims(void)
{
    int d2[2] = {0, 0};
    TAP_EQ_INT(fy_dims_create(12, 2, d2), 0, "dims 12 in 2");
    TAP_OK(d2[0] == 4 && d2[1] == 3, "12 = 4 x 3, got %d x %d", d2[0], d2[1]);
    int d3[3] = {0, 0, 0};
    TAP_EQ_INT(fy_dims_create(8, 3, d3), 0, "dims 8 in 3");
    TAP_OK(d3[0] == 2 && d3[1] == 2 && d3[2] == 2, "8 = 2 x 2 x 2");
    int df[3] = {0, 3, 0};
    TAP_EQ_INT(fy_dims_create(30, 3, df), 0, "dims with a fixed one");
    TAP_OK(df[0] == 5 && df[1] == 3 && df[2] == 2, "30 = 5 x [3] x 2");
    int bad[2] = {4, 0};
    TAP_EQ_INT(fy_dims_create(6, 2, bad), -EINVAL, "6 is no multiple of 4");
    int p[1] = {0};
    TAP_EQ_INT(fy_dims_create(7, 1, p), 0, "a prime");
    TAP_EQ_INT(p[0], 7, "7 = 7");

    struct fy_topo t = {.ndims = 3,
                        .dims = (int[]){2, 3, 4},
                        .periods = (bool[]){false, true, false}};
    int c[3];
    bool ok = true;
    for (int r = 0; r < 24; r++) {
        fy_cart_coords(&t, r, c);
        ok &= fy_cart_rank(&t, c) == r;
    }
    TAP_OK(ok, "rank -> coords -> rank round trip");
    fy_cart_coords(&t, 23, c);
    TAP_OK(c[0] == 1 && c[1] == 2 && c[2] == 3, "row-major coordinates");
}

int main(void)
{
    fy_log_rank = 3;
    if (fy_comm_init(3, 8) != 0) {
        printf("# fy_comm_init failed\n");
        return 1;
    }
    /* fy_mpi_err looks at the library state only through the world
     * communicator, which fy_comm_init just made. */
    test_builtins();
    test_groups();
    test_attrs();
    test_errhandlers();
    test_errno();
    test_dims();
    fy_comm_finalize();
    TAP_OK(fy_comm_get(MPI_COMM_WORLD) == NULL, "world is gone after finalize");
    return tap_done();
}
