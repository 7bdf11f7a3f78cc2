/* SPDX-License-Identifier: MIT */
/* Entry points for attribute caching on communicators and datatypes, and
 * the checks every object kind shares (windows use the same helpers): the
 * keyval must be live and of the object's kind, predefined keys are
 * read-only, a callback's error code is reported as the call's error. */
#include <errno.h>

#include "mpi/mpi_impl.h"

static const char *const kind_names[] = {
    [FY_ATTR_COMM] = "communicator",
    [FY_ATTR_TYPE] = "datatype",
    [FY_ATTR_WIN] = "window",
};

/* Resolve a keyval of 'kind' or report MPI_ERR_KEYVAL. */
#define GET_KEYVAL(var, h, kind, comm, fn)                                     \
    struct fy_keyval *var = fy_keyval_get(h, kind);                            \
    KEYVAL_FOUND(var, h, kind, comm, fn)
/* The same, a freed key still used by attributes included. */
#define FIND_KEYVAL(var, h, kind, comm, fn)                                    \
    struct fy_keyval *var = fy_keyval_find(h, kind);                           \
    KEYVAL_FOUND(var, h, kind, comm, fn)
#define KEYVAL_FOUND(var, h, kind, comm, fn)                                   \
    if (FY_UNLIKELY(!var))                                                     \
        return fy_mpi_err(comm, MPI_ERR_KEYVAL, fn,                            \
                          "keyval 0x%x is not a live %s keyval",               \
                          (unsigned)(h), kind_names[kind]);

int fy_mpi_keyval_create(enum fy_attr_kind kind, fy_attr_copy_fn *copy_fn,
                         fy_attr_delete_fn *delete_fn, int *keyval,
                         void *extra_state, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_CHECK(keyval != NULL, NULL, MPI_ERR_ARG, fn, "keyval is NULL");
    struct fy_keyval *kv;
    if (fy_keyval_create(kind, copy_fn, delete_fn, extra_state, &kv) != 0)
        return fy_mpi_err(NULL, MPI_ERR_NO_MEM, fn,
                          "out of memory for a keyval");
    *keyval = kv->handle;
    return MPI_SUCCESS;
}

int fy_mpi_keyval_free(enum fy_attr_kind kind, int *keyval, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_CHECK(keyval != NULL, NULL, MPI_ERR_ARG, fn, "keyval is NULL");
    FY_CHECK(!fy_attr_predefined(*keyval), NULL, MPI_ERR_KEYVAL, fn,
             "cannot free predefined keyval 0x%x", (unsigned)*keyval);
    FIND_KEYVAL(kv, *keyval, kind, NULL, fn);
    fy_keyval_free(kv);
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

int fy_mpi_attr_set(struct fy_attr **list, int obj, enum fy_attr_kind kind,
                    int keyval, void *val, struct fy_comm *errcomm,
                    const char *fn)
{
    FY_CHECK(!fy_attr_predefined(keyval), errcomm, MPI_ERR_KEYVAL, fn,
             "predefined attribute 0x%x is read-only", (unsigned)keyval);
    GET_KEYVAL(kv, keyval, kind, errcomm, fn);
    int rc = fy_attr_set(list, obj, kv, val);
    if (rc != 0)
        return fy_mpi_err(errcomm, rc, fn,
                          rc == MPI_ERR_NO_MEM
                              ? "out of memory for an attribute"
                              : "the old value's delete callback failed");
    return MPI_SUCCESS;
}

int fy_mpi_attr_get(struct fy_attr *const *list, enum fy_attr_kind kind,
                    int keyval, void *attribute_val, int *flag,
                    struct fy_comm *errcomm, const char *fn)
{
    FY_CHECK(attribute_val != NULL, errcomm, MPI_ERR_ARG, fn,
             "attribute_val is NULL");
    FY_CHECK(flag != NULL, errcomm, MPI_ERR_ARG, fn, "flag is NULL");
    /* attribute_val is really a void **: MPI's C binding stores the
     * attribute (a pointer) through it. */
    int *pre = kind == FY_ATTR_COMM ? fy_attr_predefined(keyval) : NULL;
    if (pre) {
        *(void **)attribute_val = pre;
        *flag = 1;
        return MPI_SUCCESS;
    }
    FIND_KEYVAL(kv, keyval, kind, errcomm, fn);
    void *val;
    *flag = fy_attr_get(list, kv, &val);
    if (*flag)
        *(void **)attribute_val = val;
    return MPI_SUCCESS;
}

int fy_mpi_attr_delete(struct fy_attr **list, int obj, enum fy_attr_kind kind,
                       int keyval, struct fy_comm *errcomm, const char *fn)
{
    FY_CHECK(!fy_attr_predefined(keyval), errcomm, MPI_ERR_KEYVAL, fn,
             "predefined attribute 0x%x cannot be deleted", (unsigned)keyval);
    FIND_KEYVAL(kv, keyval, kind, errcomm, fn);
    bool found;
    int rc = fy_attr_delete(list, obj, kv, &found);
    if (rc != 0)
        return fy_mpi_err(errcomm, rc, fn, "the delete callback returned %d",
                          rc);
    return MPI_SUCCESS;
}

/* ---- communicators ---------------------------------------------------- */

FY_API int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy_fn,
                                   MPI_Comm_delete_attr_function *delete_fn,
                                   int *comm_keyval, void *extra_state)
{
    FY_MT_OBJ();
    return fy_mpi_keyval_create(FY_ATTR_COMM, copy_fn, delete_fn, comm_keyval,
                                extra_state, __func__);
}
FY_ALIAS(MPI_Comm_create_keyval)

FY_API int PMPI_Keyval_create(MPI_Copy_function *copy_fn,
                              MPI_Delete_function *delete_fn, int *keyval,
                              void *extra_state)
{
    FY_MT_OBJ();
    /* MPI-1's callback types have the same signatures as MPI-2's. */
    return fy_mpi_keyval_create(FY_ATTR_COMM, copy_fn, delete_fn, keyval,
                                extra_state, __func__);
}
FY_ALIAS(MPI_Keyval_create)

FY_API int PMPI_Comm_free_keyval(int *comm_keyval)
{
    FY_MT_ENTER();
    return fy_mpi_keyval_free(FY_ATTR_COMM, comm_keyval, __func__);
}
FY_ALIAS(MPI_Comm_free_keyval)

FY_API int PMPI_Keyval_free(int *keyval)
{
    FY_MT_ENTER();
    return fy_mpi_keyval_free(FY_ATTR_COMM, keyval, __func__);
}
FY_ALIAS(MPI_Keyval_free)

static int comm_set_attr(MPI_Comm comm, int keyval, void *val, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    return fy_mpi_attr_set(&c->attrs, comm, FY_ATTR_COMM, keyval, val, c, fn);
}

FY_API int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval,
                              void *attribute_val)
{
    FY_MT_ENTER();
    return comm_set_attr(comm, comm_keyval, attribute_val, __func__);
}
FY_ALIAS(MPI_Comm_set_attr)

FY_API int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    FY_MT_ENTER();
    return comm_set_attr(comm, keyval, attribute_val, __func__);
}
FY_ALIAS(MPI_Attr_put)

static int comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val,
                         int *flag, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    return fy_mpi_attr_get(&c->attrs, FY_ATTR_COMM, keyval, attribute_val, flag,
                           c, fn);
}

FY_API int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval,
                              void *attribute_val, int *flag)
{
    FY_MT_ENTER();
    return comm_get_attr(comm, comm_keyval, attribute_val, flag, __func__);
}
FY_ALIAS(MPI_Comm_get_attr)

FY_API int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val,
                         int *flag)
{
    FY_MT_ENTER();
    return comm_get_attr(comm, keyval, attribute_val, flag, __func__);
}
FY_ALIAS(MPI_Attr_get)

static int comm_delete_attr(MPI_Comm comm, int keyval, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    return fy_mpi_attr_delete(&c->attrs, comm, FY_ATTR_COMM, keyval, c, fn);
}

FY_API int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
    FY_MT_ENTER();
    return comm_delete_attr(comm, comm_keyval, __func__);
}
FY_ALIAS(MPI_Comm_delete_attr)

FY_API int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    FY_MT_ENTER();
    return comm_delete_attr(comm, keyval, __func__);
}
FY_ALIAS(MPI_Attr_delete)

/* ---- datatypes -------------------------------------------------------- */

#define GET_TYPE FY_GET_TYPE

FY_API int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *copy_fn,
                                   MPI_Type_delete_attr_function *delete_fn,
                                   int *type_keyval, void *extra_state)
{
    FY_MT_OBJ();
    return fy_mpi_keyval_create(FY_ATTR_TYPE, copy_fn, delete_fn, type_keyval,
                                extra_state, __func__);
}
FY_ALIAS(MPI_Type_create_keyval)

FY_API int PMPI_Type_free_keyval(int *type_keyval)
{
    FY_MT_ENTER();
    return fy_mpi_keyval_free(FY_ATTR_TYPE, type_keyval, __func__);
}
FY_ALIAS(MPI_Type_free_keyval)

FY_API int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval,
                              void *attribute_val)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    GET_TYPE(dt, datatype, __func__);
    return fy_mpi_attr_set(&dt->attrs, datatype, FY_ATTR_TYPE, type_keyval,
                           attribute_val, NULL, __func__);
}
FY_ALIAS(MPI_Type_set_attr)

FY_API int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval,
                              void *attribute_val, int *flag)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    GET_TYPE(dt, datatype, __func__);
    return fy_mpi_attr_get(&dt->attrs, FY_ATTR_TYPE, type_keyval, attribute_val,
                           flag, NULL, __func__);
}
FY_ALIAS(MPI_Type_get_attr)

FY_API int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    GET_TYPE(dt, datatype, __func__);
    return fy_mpi_attr_delete(&dt->attrs, datatype, FY_ATTR_TYPE, type_keyval,
                              NULL, __func__);
}
FY_ALIAS(MPI_Type_delete_attr)
