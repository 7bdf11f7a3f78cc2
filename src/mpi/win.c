/* SPDX-License-Identifier: MIT */
/* Entry points for one-sided communication: window creation and
 * destruction, attributes, names, info and error handlers of windows, the
 * synchronisation calls and the RMA operations. Arguments are checked
 * here, errors reported through the window's error handler
 * (MPI_ERRORS_ARE_FATAL unless the program sets another); src/rma does
 * the work. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"
#include "mpi/request.h"
#include "rma/rma.h"

/* Report an error on window w. */
#define WERR(w, cls, fn, ...)                                                  \
    fy_mpi_err_obj((w)->errhandler, (w)->handle, cls, fn, __VA_ARGS__)

#define WCHECK(cond, w, cls, fn, ...)                                          \
    do {                                                                       \
        if (FY_UNLIKELY(!(cond)))                                              \
            return WERR(w, cls, fn, __VA_ARGS__);                              \
    } while (0)

/* Resolve a window handle or report MPI_ERR_WIN (on MPI_COMM_WORLD's
 * handler: there is no window to ask). */
#define GET_WIN(var, h, fn)                                                    \
    struct fy_rma_win *var = fy_rma_win_get(h);                                \
    if (FY_UNLIKELY(!var))                                                     \
        return fy_mpi_err(NULL, MPI_ERR_WIN, fn, "invalid window 0x%x",        \
                          (unsigned)(h));

#define WCHECK_PTR(p, w, fn)                                                   \
    WCHECK((p) != NULL, w, MPI_ERR_ARG, fn, "%s is NULL", #p)

/* ---- creation ------------------------------------------------------------ */

static bool info_true(struct fy_info *in, const char *key)
{
    const char *v = fy_info_lookup(in, key);
    return v && strcmp(v, "true") == 0;
}

static int win_make(int flavor, MPI_Aint size, MPI_Aint disp_unit,
                    MPI_Info info, MPI_Comm comm, void *base, void *baseptr,
                    MPI_Win *win, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    FY_CHECK(win != NULL, c, MPI_ERR_ARG, fn, "win is NULL");
    FY_CHECK(size >= 0, c, MPI_ERR_SIZE, fn, "size %ld is negative",
             (long)size);
    FY_CHECK(disp_unit > 0, c, MPI_ERR_DISP, fn,
             "disp_unit %lld is not positive", (long long)disp_unit);
    /* The _c forms pass an MPI_Aint; windows keep an int (as the int
     * forms' attribute MPI_WIN_DISP_UNIT must report it). */
    FY_CHECK(disp_unit <= INT_MAX, c, MPI_ERR_DISP, fn,
             "disp_unit %lld is larger than Ferry supports (INT_MAX)",
             (long long)disp_unit);
    FY_CHECK(info == MPI_INFO_NULL || fy_info_get(info), c, MPI_ERR_INFO, fn,
             "invalid info object 0x%x", (unsigned)info);
    FY_CHECK(baseptr != NULL || (flavor != MPI_WIN_FLAVOR_SHARED &&
                                 flavor != MPI_WIN_FLAVOR_ALLOCATE),
             c, MPI_ERR_ARG, fn, "baseptr is NULL");
    FY_CHECK(flavor != MPI_WIN_FLAVOR_CREATE || size == 0 || base != NULL, c,
             MPI_ERR_BASE, fn, "base is NULL for %ld bytes", (long)size);
    struct fy_info *in = info == MPI_INFO_NULL ? NULL : fy_info_get(info);
    struct fy_info *keep = NULL;
    if (fy_info_dup(in, &keep) != 0)
        return fy_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory");
    struct fy_rma_win *w;
    int rc =
        fy_rma_win_create(c, flavor, size, (int)disp_unit,
                          info_true(in, "alloc_shared_noncontig"), base, &w);
    if (rc) {
        fy_info_free(keep);
        if (rc == -ENOTSUP)
            return fy_mpi_err(c, MPI_ERR_RMA_SHARED, fn,
                              "the communicator spans more than one node");
        if (rc == -EPERM || rc == -EACCES || rc == -EPROTO || rc == -ESRCH)
            return fy_mpi_err(c, MPI_ERR_WIN, fn,
                              "this machine does not let ranks reach each "
                              "other's memory (%s); see the log above",
                              strerror(-rc));
        return fy_mpi_err(c, fy_errno_to_class(rc), fn, "%s", strerror(-rc));
    }
    w->info = keep;
    if (baseptr)
        *(void **)baseptr = w->base;
    *win = w->handle;
    return MPI_SUCCESS;
}

FY_API int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info,
                                    MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    FY_MT_ENTER();
    int rc = win_make(MPI_WIN_FLAVOR_SHARED, size, disp_unit, info, comm, NULL,
                      baseptr, win, __func__);
    fy_rma_thread_start(); /* the call's last action: see rma.h */
    return rc;
}
FY_ALIAS(MPI_Win_allocate_shared)

FY_API int PMPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit,
                                      MPI_Info info, MPI_Comm comm,
                                      void *baseptr, MPI_Win *win)
{
    FY_MT_ENTER();
    int rc = win_make(MPI_WIN_FLAVOR_SHARED, size, disp_unit, info, comm, NULL,
                      baseptr, win, __func__);
    fy_rma_thread_start(); /* the call's last action: see rma.h */
    return rc;
}
FY_ALIAS(MPI_Win_allocate_shared_c)

FY_API int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info,
                             MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    FY_MT_ENTER();
    int rc = win_make(MPI_WIN_FLAVOR_ALLOCATE, size, disp_unit, info, comm,
                      NULL, baseptr, win, __func__);
    fy_rma_thread_start(); /* the call's last action: see rma.h */
    return rc;
}
FY_ALIAS(MPI_Win_allocate)

FY_API int PMPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                               MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    FY_MT_ENTER();
    int rc = win_make(MPI_WIN_FLAVOR_ALLOCATE, size, disp_unit, info, comm,
                      NULL, baseptr, win, __func__);
    fy_rma_thread_start(); /* the call's last action: see rma.h */
    return rc;
}
FY_ALIAS(MPI_Win_allocate_c)

FY_API int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit,
                           MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    FY_MT_ENTER();
    int rc = win_make(MPI_WIN_FLAVOR_CREATE, size, disp_unit, info, comm, base,
                      NULL, win, __func__);
    fy_rma_thread_start(); /* the call's last action: see rma.h */
    return rc;
}
FY_ALIAS(MPI_Win_create)

FY_API int PMPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit,
                             MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    FY_MT_ENTER();
    int rc = win_make(MPI_WIN_FLAVOR_CREATE, size, disp_unit, info, comm, base,
                      NULL, win, __func__);
    fy_rma_thread_start(); /* the call's last action: see rma.h */
    return rc;
}
FY_ALIAS(MPI_Win_create_c)

FY_API int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    FY_MT_ENTER();
    int rc = win_make(MPI_WIN_FLAVOR_DYNAMIC, 0, 1, info, comm, NULL, NULL, win,
                      __func__);
    fy_rma_thread_start(); /* the call's last action: see rma.h */
    return rc;
}
FY_ALIAS(MPI_Win_create_dynamic)

/* MPI 4.0 12.2.3: any flavour may be queried; a member whose memory this
 * process cannot load and store directly (user memory of another rank
 * that was not moved to shared pages, any dynamic window) reads as size
 * 0 and a NULL base. */
static bool query_direct(const struct fy_rma_win *w, int rank)
{
    return w->flavor != MPI_WIN_FLAVOR_DYNAMIC && w->peers[rank].direct &&
           w->peers[rank].size;
}

static int shared_query(MPI_Win win, int rank, MPI_Aint *size,
                        MPI_Aint *disp_unit, void *baseptr, const char *fn)
{
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    WCHECK(rank == MPI_PROC_NULL || (rank >= 0 && rank < w->size), w,
           MPI_ERR_RANK, fn, "rank %d is not in [0, %d)", rank, w->size);
    WCHECK_PTR(size, w, fn);
    WCHECK_PTR(disp_unit, w, fn);
    WCHECK_PTR(baseptr, w, fn);
    if (rank == MPI_PROC_NULL) {
        /* MPI: the lowest rank with a non-zero size. */
        for (rank = 0; rank < w->size - 1; rank++)
            if (query_direct(w, rank))
                break;
    }
    *disp_unit = w->peers[rank].disp_unit;
    if (!query_direct(w, rank)) {
        *size = 0;
        *(void **)baseptr = NULL;
        return MPI_SUCCESS;
    }
    *size = (MPI_Aint)w->peers[rank].size;
    *(void **)baseptr = (void *)(uintptr_t)w->peers[rank].base;
    return MPI_SUCCESS;
}

FY_API int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size,
                                 int *disp_unit, void *baseptr)
{
    FY_MT_ENTER();
    MPI_Aint du = 0;
    int rc = shared_query(win, rank, size, disp_unit ? &du : NULL, baseptr,
                          __func__);
    if (rc == MPI_SUCCESS)
        *disp_unit = (int)du; /* windows keep an int */
    return rc;
}
FY_ALIAS(MPI_Win_shared_query)

FY_API int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size,
                                   MPI_Aint *disp_unit, void *baseptr)
{
    FY_MT_ENTER();
    return shared_query(win, rank, size, disp_unit, baseptr, __func__);
}
FY_ALIAS(MPI_Win_shared_query_c)

FY_API int PMPI_Win_free(MPI_Win *win)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    FY_CHECK(win != NULL, NULL, MPI_ERR_ARG, fn, "win is NULL");
    GET_WIN(w, *win, fn);
    WCHECK(w->nlocks == 0 && !w->lock_all && !w->started && !w->posted_open, w,
           MPI_ERR_RMA_SYNC, fn,
           "an epoch is still open (unlock, complete or wait first)");
    int rc = fy_attr_delete_all(&w->attrs, w->handle);
    if (rc)
        return WERR(w, rc, fn, "an attribute delete callback returned %d", rc);
    fy_info_free(w->info);
    w->info = NULL;
    struct fy_errhandler *eh = fy_errhandler_get(w->errhandler);
    MPI_Errhandler keep = w->errhandler;
    rc = fy_rma_win_free(w);
    if (eh)
        fy_errhandler_release(eh);
    *win = MPI_WIN_NULL;
    if (rc)
        return fy_mpi_err_obj(keep, MPI_WIN_NULL, fy_errno_to_class(rc), fn,
                              "%s", strerror(-rc));
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Win_free)

FY_API int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    WCHECK(w->flavor == MPI_WIN_FLAVOR_DYNAMIC, w, MPI_ERR_RMA_FLAVOR, fn,
           "not a dynamic window");
    WCHECK(size >= 0, w, MPI_ERR_SIZE, fn, "size %ld is negative", (long)size);
    WCHECK(base != NULL || size == 0, w, MPI_ERR_BASE, fn, "base is NULL");
    int rc = fy_rma_attach(w, base, size);
    if (rc == -EEXIST)
        return WERR(w, MPI_ERR_RMA_ATTACH, fn,
                    "[%p, +%ld) overlaps memory already attached", base,
                    (long)size);
    if (rc == -EOVERFLOW)
        return WERR(w, MPI_ERR_RMA_ATTACH, fn,
                    "[%p, +%ld) wraps around the address space", base,
                    (long)size);
    if (rc == -ENOSPC)
        return WERR(w, MPI_ERR_RMA_ATTACH, fn,
                    "%u regions are attached already, the most there may be",
                    (unsigned)FY_RMA_ATTACH_MAX);
    if (rc)
        return WERR(w, MPI_ERR_RMA_ATTACH, fn, "%s", strerror(-rc));
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Win_attach)

FY_API int PMPI_Win_detach(MPI_Win win, const void *base)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    WCHECK(w->flavor == MPI_WIN_FLAVOR_DYNAMIC, w, MPI_ERR_RMA_FLAVOR, fn,
           "not a dynamic window");
    if (fy_rma_detach(w, base) != 0)
        return WERR(w, MPI_ERR_RMA_ATTACH, fn,
                    "%p is not the base of an attached region", base);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Win_detach)

/* ---- attributes ---------------------------------------------------------- */

FY_API int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *copy_fn,
                                  MPI_Win_delete_attr_function *delete_fn,
                                  int *win_keyval, void *extra_state)
{
    FY_MT_OBJ();
    return fy_mpi_keyval_create(FY_ATTR_WIN, copy_fn, delete_fn, win_keyval,
                                extra_state, __func__);
}
FY_ALIAS(MPI_Win_create_keyval)

FY_API int PMPI_Win_free_keyval(int *win_keyval)
{
    FY_MT_ENTER();
    return fy_mpi_keyval_free(FY_ATTR_WIN, win_keyval, __func__);
}
FY_ALIAS(MPI_Win_free_keyval)

static bool win_predefined(int keyval)
{
    return keyval == MPI_WIN_BASE || keyval == MPI_WIN_SIZE ||
           keyval == MPI_WIN_DISP_UNIT || keyval == MPI_WIN_CREATE_FLAVOR ||
           keyval == MPI_WIN_MODEL;
}

FY_API int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    WCHECK(!win_predefined(win_keyval), w, MPI_ERR_KEYVAL, fn,
           "predefined attribute 0x%x is read-only", (unsigned)win_keyval);
    WCHECK(fy_keyval_get(win_keyval, FY_ATTR_WIN), w, MPI_ERR_KEYVAL, fn,
           "keyval 0x%x is not a live window keyval", (unsigned)win_keyval);
    return fy_mpi_attr_set(&w->attrs, win, FY_ATTR_WIN, win_keyval,
                           attribute_val, NULL, fn);
}
FY_ALIAS(MPI_Win_set_attr)

FY_API int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val,
                             int *flag)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    WCHECK_PTR(attribute_val, w, fn);
    WCHECK_PTR(flag, w, fn);
    /* MPI: the base is returned as itself, the others as pointers to
     * values that live as long as the window. */
    static int model = MPI_WIN_UNIFIED;
    void *v = NULL;
    switch (win_keyval) {
    case MPI_WIN_BASE:
        v = w->base;
        break;
    case MPI_WIN_SIZE:
        v = &w->wsize;
        break;
    case MPI_WIN_DISP_UNIT:
        v = &w->disp_unit;
        break;
    case MPI_WIN_CREATE_FLAVOR:
        v = &w->flavor;
        break;
    case MPI_WIN_MODEL:
        v = &model;
        break;
    default:
        WCHECK(fy_keyval_find(win_keyval, FY_ATTR_WIN), w, MPI_ERR_KEYVAL, fn,
               "keyval 0x%x is not a live window keyval", (unsigned)win_keyval);
        return fy_mpi_attr_get(&w->attrs, FY_ATTR_WIN, win_keyval,
                               attribute_val, flag, NULL, fn);
    }
    *(void **)attribute_val = v;
    *flag = 1;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Win_get_attr)

FY_API int PMPI_Win_delete_attr(MPI_Win win, int win_keyval)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    WCHECK(!win_predefined(win_keyval), w, MPI_ERR_KEYVAL, fn,
           "predefined attribute 0x%x cannot be deleted", (unsigned)win_keyval);
    WCHECK(fy_keyval_find(win_keyval, FY_ATTR_WIN), w, MPI_ERR_KEYVAL, fn,
           "keyval 0x%x is not a live window keyval", (unsigned)win_keyval);
    return fy_mpi_attr_delete(&w->attrs, win, FY_ATTR_WIN, win_keyval, NULL,
                              fn);
}
FY_ALIAS(MPI_Win_delete_attr)

/* ---- group, name, info, error handlers ---------------------------------- */

FY_API int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    WCHECK_PTR(group, w, fn);
    fy_group_retain(w->group);
    *group = w->group->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Win_get_group)

FY_API int PMPI_Win_set_name(MPI_Win win, const char *win_name)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    WCHECK_PTR(win_name, w, fn);
    strncpy(w->name, win_name, sizeof(w->name) - 1);
    w->name[sizeof(w->name) - 1] = '\0';
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Win_set_name)

FY_API int PMPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    WCHECK_PTR(win_name, w, fn);
    WCHECK_PTR(resultlen, w, fn);
    strcpy(win_name, w->name);
    *resultlen = (int)strlen(w->name);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Win_get_name)

FY_API int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    struct fy_info *in = fy_info_get(info);
    WCHECK(in != NULL, w, MPI_ERR_INFO, fn, "invalid info object 0x%x",
           (unsigned)info);
    struct fy_info *keep;
    if (fy_info_dup(in, &keep) != 0)
        return WERR(w, MPI_ERR_NO_MEM, fn, "out of memory");
    fy_info_free(w->info);
    w->info = keep;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Win_set_info)

FY_API int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    WCHECK_PTR(info_used, w, fn);
    struct fy_info *out;
    if (fy_info_dup(w->info, &out) != 0)
        return WERR(w, MPI_ERR_NO_MEM, fn, "out of memory");
    *info_used = fy_info_handle(out);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Win_get_info)

FY_API int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *function,
                                      MPI_Errhandler *errhandler)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    FY_CHECK(function != NULL, NULL, MPI_ERR_ARG, fn, "function is NULL");
    FY_CHECK(errhandler != NULL, NULL, MPI_ERR_ARG, fn, "errhandler is NULL");
    struct fy_errhandler *eh;
    /* MPI_Win and MPI_Comm are both int handles: the two handler types
     * are the same function type. */
    if (fy_errhandler_create(function, &eh) != 0)
        return fy_mpi_err(NULL, MPI_ERR_NO_MEM, fn,
                          "out of memory for an error handler");
    *errhandler = eh->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Win_create_errhandler)

FY_API int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    struct fy_errhandler *eh = fy_errhandler_get(errhandler);
    WCHECK(eh != NULL, w, MPI_ERR_ARG, fn, "invalid error handler 0x%x",
           (unsigned)errhandler);
    fy_errhandler_retain(eh);
    struct fy_errhandler *old = fy_errhandler_get(w->errhandler);
    if (old)
        fy_errhandler_release(old);
    w->errhandler = errhandler;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Win_set_errhandler)

FY_API int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    WCHECK_PTR(errhandler, w, fn);
    struct fy_errhandler *eh = fy_errhandler_get(w->errhandler);
    if (eh)
        fy_errhandler_retain(eh);
    *errhandler = w->errhandler;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Win_get_errhandler)

FY_API int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    struct fy_errhandler *eh = fy_errhandler_get(w->errhandler);
    if (eh && eh->handle == MPI_ERRORS_RETURN)
        return MPI_SUCCESS;
    WERR(w, errorcode, fn, "called with error code %d", errorcode);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Win_call_errhandler)

/* ---- synchronisation ----------------------------------------------------- */

/* An error the targets reported for requests that had no reply of their
 * own (active messages, rma/am.c), found by the synchronisation call. */
static int sync_done(struct fy_rma_win *w, const char *fn)
{
    if (!w->am && !w->ho)
        return MPI_SUCCESS; /* nothing was handed over or sent */
    int e = fy_rma_am_error(w);
    if (e == -ERANGE)
        return WERR(w, MPI_ERR_RMA_RANGE, fn,
                    "the target found an access outside its window (nothing "
                    "of it was written)");
    if (e)
        return WERR(w, fy_errno_to_class(e), fn, "a target reported: %s",
                    strerror(-e));
    return MPI_SUCCESS;
}

#define MODE_ALL                                                               \
    (MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT |                    \
     MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)

FY_API int PMPI_Win_fence(int assert, MPI_Win win)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    WCHECK((assert & ~MODE_ALL) == 0, w, MPI_ERR_ASSERT, fn,
           "invalid assert 0x%x", (unsigned)assert);
    WCHECK(w->nlocks == 0 && !w->lock_all && !w->started && !w->posted_open, w,
           MPI_ERR_RMA_SYNC, fn, "a lock or PSCW epoch is open on this window");
    int rc = fy_rma_fence(w, assert);
    if (rc)
        return WERR(w, fy_errno_to_class(rc), fn, "%s", strerror(-rc));
    return sync_done(w, fn);
}
FY_ALIAS(MPI_Win_fence)

#define CHECK_TARGET(w, r, fn)                                                 \
    WCHECK((r) >= 0 && (r) < (w)->size, w, MPI_ERR_RANK, fn,                   \
           "rank %d is not in [0, %d)", (r), (w)->size)

FY_API int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    WCHECK(lock_type == MPI_LOCK_SHARED || lock_type == MPI_LOCK_EXCLUSIVE, w,
           MPI_ERR_LOCKTYPE, fn, "invalid lock type %d", lock_type);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    CHECK_TARGET(w, rank, fn);
    WCHECK((assert & ~MPI_MODE_NOCHECK) == 0, w, MPI_ERR_ASSERT, fn,
           "invalid assert 0x%x", (unsigned)assert);
    WCHECK(!w->lockmode[rank] && !w->lock_all, w, MPI_ERR_RMA_SYNC, fn,
           "rank %d is already locked by this process", rank);
    fy_rma_lock(w, lock_type, rank, assert);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Win_lock)

FY_API int PMPI_Win_unlock(int rank, MPI_Win win)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    CHECK_TARGET(w, rank, fn);
    WCHECK(w->lockmode[rank], w, MPI_ERR_RMA_SYNC, fn,
           "rank %d is not locked by this process", rank);
    fy_rma_unlock(w, rank);
    return sync_done(w, fn);
}
FY_ALIAS(MPI_Win_unlock)

FY_API int PMPI_Win_lock_all(int assert, MPI_Win win)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    WCHECK((assert & ~MPI_MODE_NOCHECK) == 0, w, MPI_ERR_ASSERT, fn,
           "invalid assert 0x%x", (unsigned)assert);
    WCHECK(!w->lock_all && w->nlocks == 0, w, MPI_ERR_RMA_SYNC, fn,
           "this process already holds locks on the window");
    fy_rma_lock_all(w, assert);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Win_lock_all)

FY_API int PMPI_Win_unlock_all(MPI_Win win)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    WCHECK(w->lock_all, w, MPI_ERR_RMA_SYNC, fn,
           "MPI_Win_lock_all was not called");
    fy_rma_unlock_all(w);
    return sync_done(w, fn);
}
FY_ALIAS(MPI_Win_unlock_all)

static int flush(MPI_Win win, int rank, bool all, const char *fn)
{
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    if (!all) {
        if (rank == MPI_PROC_NULL)
            return MPI_SUCCESS;
        CHECK_TARGET(w, rank, fn);
        WCHECK(w->lock_all || w->lockmode[rank], w, MPI_ERR_RMA_SYNC, fn,
               "no passive-target epoch to rank %d", rank);
    } else {
        WCHECK(w->lock_all || w->nlocks, w, MPI_ERR_RMA_SYNC, fn,
               "no passive-target epoch on the window");
    }
    fy_rma_flush(w);
    return sync_done(w, fn);
}

FY_API int PMPI_Win_flush(int rank, MPI_Win win)
{
    FY_MT_WIN(win);
    return flush(win, rank, false, __func__);
}
FY_ALIAS(MPI_Win_flush)

FY_API int PMPI_Win_flush_local(int rank, MPI_Win win)
{
    FY_MT_WIN(win);
    return flush(win, rank, false, __func__);
}
FY_ALIAS(MPI_Win_flush_local)

FY_API int PMPI_Win_flush_all(MPI_Win win)
{
    FY_MT_WIN(win);
    return flush(win, 0, true, __func__);
}
FY_ALIAS(MPI_Win_flush_all)

FY_API int PMPI_Win_flush_local_all(MPI_Win win)
{
    FY_MT_WIN(win);
    return flush(win, 0, true, __func__);
}
FY_ALIAS(MPI_Win_flush_local_all)

FY_API int PMPI_Win_sync(MPI_Win win)
{
    FY_MT_WIN(win);
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    /* Public and private copies are one (MPI_WIN_UNIFIED): order our
     * loads and stores against the other ranks'. */
    fy_rma_flush(w);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Win_sync)

/* Translate a group of the window's ranks (PSCW) into window ranks. */
static int group_ranks(struct fy_rma_win *w, MPI_Group group, int **out,
                       int *n_out, const char *fn)
{
    struct fy_group *g = fy_group_get(group);
    WCHECK(g != NULL, w, MPI_ERR_GROUP, fn, "invalid group 0x%x",
           (unsigned)group);
    int *r = malloc(sizeof(int) * (size_t)(g->size ? g->size : 1));
    WCHECK(r != NULL, w, MPI_ERR_NO_MEM, fn, "out of memory");
    for (int i = 0; i < g->size; i++) {
        r[i] = fy_group_rank_of_world(w->group, g->world[i]);
        if (r[i] == MPI_UNDEFINED) {
            free(r);
            return WERR(w, MPI_ERR_GROUP, fn,
                        "group member %d is not in the window", i);
        }
    }
    *out = r;
    *n_out = g->size;
    return MPI_SUCCESS;
}

/* Win_post and Win_start: open an exposure (post) or access (start)
 * epoch towards the window ranks of 'group'. */
static int pscw_open(MPI_Group group, int assert, MPI_Win win, bool post,
                     const char *fn)
{
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    WCHECK((assert & ~MODE_ALL) == 0, w, MPI_ERR_ASSERT, fn,
           "invalid assert 0x%x", (unsigned)assert);
    WCHECK(!(post ? w->posted_open : w->started), w, MPI_ERR_RMA_SYNC, fn,
           "an %s epoch is already open", post ? "exposure" : "access");
    int *r = NULL, n = 0;
    int rc = group_ranks(w, group, &r, &n, fn);
    if (rc)
        return rc;
    if (post)
        fy_rma_post(w, n, r);
    else
        fy_rma_start(w, n, r);
    free(r);
    return MPI_SUCCESS;
}

FY_API int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    FY_MT_ENTER();
    return pscw_open(group, assert, win, true, __func__);
}
FY_ALIAS(MPI_Win_post)

FY_API int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    FY_MT_ENTER();
    return pscw_open(group, assert, win, false, __func__);
}
FY_ALIAS(MPI_Win_start)

FY_API int PMPI_Win_complete(MPI_Win win)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    WCHECK(w->started, w, MPI_ERR_RMA_SYNC, fn, "MPI_Win_start was not called");
    fy_rma_complete(w);
    return sync_done(w, fn);
}
FY_ALIAS(MPI_Win_complete)

FY_API int PMPI_Win_wait(MPI_Win win)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    WCHECK(w->posted_open, w, MPI_ERR_RMA_SYNC, fn,
           "MPI_Win_post was not called");
    (void)fy_rma_wait(w, true);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Win_wait)

FY_API int PMPI_Win_test(MPI_Win win, int *flag)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    WCHECK_PTR(flag, w, fn);
    WCHECK(w->posted_open, w, MPI_ERR_RMA_SYNC, fn,
           "MPI_Win_post was not called");
    *flag = fy_rma_wait(w, false);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Win_test)

/* ---- operations ---------------------------------------------------------- */

/* Resolve and check one buffer description (count, datatype). */
static int check_buf(struct fy_rma_win *w, MPI_Count count, MPI_Datatype h,
                     struct fy_dtype **out, const char *what, const char *fn)
{
    WCHECK(count >= 0, w, MPI_ERR_COUNT, fn, "%s count %lld is negative", what,
           (long long)count);
    struct fy_dtype *dt = fy_dtype_get(h);
    WCHECK(dt != NULL, w, MPI_ERR_TYPE, fn, "invalid %s datatype 0x%x", what,
           (unsigned)h);
    WCHECK(dt->committed, w, MPI_ERR_TYPE, fn,
           "%s datatype 0x%x is not committed", what, (unsigned)h);
    *out = dt;
    return MPI_SUCCESS;
}

/* The target side common to every operation: rank, epoch, range. Sets
 * *skip for MPI_PROC_NULL. */
static int check_target(struct fy_rma_win *w, int rank, MPI_Aint disp,
                        MPI_Count count, struct fy_dtype *dt, uint64_t *addr,
                        bool *skip, const char *fn)
{
    *skip = rank == MPI_PROC_NULL;
    if (*skip)
        return MPI_SUCCESS;
    CHECK_TARGET(w, rank, fn);
    WCHECK(fy_rma_in_epoch(w, rank), w, MPI_ERR_RMA_SYNC, fn,
           "no access epoch to rank %d is open (fence, lock, lock_all or "
           "start first)",
           rank);
    int rc = fy_rma_target(w, rank, disp, count, dt, addr);
    WCHECK(rc != -ERANGE, w, MPI_ERR_RMA_RANGE, fn,
           "%lld elements at displacement %ld are outside rank %d's window",
           (long long)count, (long)disp, rank);
    if (rc)
        return WERR(w, fy_errno_to_class(rc), fn,
                    "cannot read rank %d's attached regions: %s", rank,
                    strerror(-rc));
    return MPI_SUCCESS;
}

static int op_done(struct fy_rma_win *w, int rc, const char *fn)
{
    if (rc == -ERANGE)
        return WERR(w, MPI_ERR_RMA_RANGE, fn,
                    "the target found the access outside its window (nothing "
                    "of it was written)");
    if (rc == -EINVAL)
        return WERR(w, MPI_ERR_OP, fn, "the op is not defined on the type");
    if (rc)
        return WERR(w, fy_errno_to_class(rc), fn, "%s", strerror(-rc));
    return MPI_SUCCESS;
}

static int rma_put_get(const void *obuf, MPI_Count ocount, MPI_Datatype otype,
                       int trank, MPI_Aint tdisp, MPI_Count tcount,
                       MPI_Datatype ttype, MPI_Win win, bool get,
                       const char *fn)
{
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    uint64_t addr;
    bool skip;
    /* Elements of one predefined type on both sides of a window in shared
     * memory (the common small put or get): one lookup of the type, the
     * target checks, the copy. Anything else takes the general path. */
    if (fy_rma_acc_atomic(w) && otype == ttype && ocount == tcount &&
        tcount > 0) {
        struct fy_dtype *dt = fy_dtype_get(ttype);
        if (dt && dt->builtin && dt->contig) {
            int rc =
                check_target(w, trank, tdisp, tcount, dt, &addr, &skip, fn);
            if (rc || skip)
                return rc;
            if (w->peers[trank].direct) {
                void *remote = (void *)(uintptr_t)addr;
                size_t n = (size_t)(tcount * dt->size);
                if (get)
                    fy_rma_copy((void *)obuf, remote, n);
                else
                    fy_rma_copy(remote, obuf, n);
                return MPI_SUCCESS;
            }
        }
    }
    struct fy_dtype *odt, *tdt;
    int rc = check_buf(w, ocount, otype, &odt, "origin", fn);
    if (!rc)
        rc = check_buf(w, tcount, ttype, &tdt, "target", fn);
    if (rc)
        return rc;
    WCHECK(ocount * odt->size == tcount * tdt->size, w, MPI_ERR_TRUNCATE, fn,
           "origin has %lld bytes, target %lld",
           (long long)(ocount * odt->size), (long long)(tcount * tdt->size));
    rc = check_target(w, trank, tdisp, tcount, tdt, &addr, &skip, fn);
    if (rc || skip)
        return rc;
    if (get)
        rc = fy_rma_get(w, (void *)obuf, ocount, odt, trank, addr, tcount, tdt);
    else
        rc = fy_rma_put(w, obuf, ocount, odt, trank, addr, tcount, tdt);
    return op_done(w, rc, fn);
}

FY_API int PMPI_Put(const void *origin_addr, int origin_count,
                    MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Win win)
{
    FY_MT_WIN(win);
    return rma_put_get(origin_addr, origin_count, origin_datatype, target_rank,
                       target_disp, target_count, target_datatype, win, false,
                       __func__);
}
FY_ALIAS(MPI_Put)

FY_API int PMPI_Put_c(const void *origin_addr, MPI_Count origin_count,
                      MPI_Datatype origin_datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Count target_count,
                      MPI_Datatype target_datatype, MPI_Win win)
{
    FY_MT_WIN(win);
    return rma_put_get(origin_addr, origin_count, origin_datatype, target_rank,
                       target_disp, target_count, target_datatype, win, false,
                       __func__);
}
FY_ALIAS(MPI_Put_c)

FY_API int PMPI_Get(void *origin_addr, int origin_count,
                    MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Win win)
{
    FY_MT_WIN(win);
    return rma_put_get(origin_addr, origin_count, origin_datatype, target_rank,
                       target_disp, target_count, target_datatype, win, true,
                       __func__);
}
FY_ALIAS(MPI_Get)

FY_API int PMPI_Get_c(void *origin_addr, MPI_Count origin_count,
                      MPI_Datatype origin_datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Count target_count,
                      MPI_Datatype target_datatype, MPI_Win win)
{
    FY_MT_WIN(win);
    return rma_put_get(origin_addr, origin_count, origin_datatype, target_rank,
                       target_disp, target_count, target_datatype, win, true,
                       __func__);
}
FY_ALIAS(MPI_Get_c)

/* The predefined (op, type) pair this thread's last accumulate on a
 * shared window used, already looked up and checked: a loop of
 * Fetch_and_op or Accumulate on one counter pays for that once.
 * Predefined handles never change meaning, so the pair stays valid. */
static _Thread_local struct {
    MPI_Op op;
    MPI_Datatype type;
    struct fy_op *o;
    struct fy_dtype *dt;
} s_acc_pair;

/* Accumulate in every form: rbuf NULL for MPI_Accumulate. */
static int rma_acc(const void *obuf, MPI_Count ocount, MPI_Datatype otype,
                   void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int trank,
                   MPI_Aint tdisp, MPI_Count tcount, MPI_Datatype ttype,
                   MPI_Op op, MPI_Win win, const char *fn)
{
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    bool no_op = op == MPI_NO_OP;
    bool cached =
        op == s_acc_pair.op && ttype == s_acc_pair.type && s_acc_pair.o != NULL;
    struct fy_op *o = cached ? s_acc_pair.o : fy_op_get(op);
    WCHECK(o != NULL, w, MPI_ERR_OP, fn, "invalid op 0x%x", (unsigned)op);
    uint64_t addr;
    bool skip;
    /* Elements of one predefined type everywhere on a window in shared
     * memory (a counter, Fetch_and_op, a short vector): one lookup of the
     * type, then the hardware atomics. Anything else, or anything this
     * does not accept, takes the checks and the general path below. */
    if (fy_rma_acc_atomic(w) && tcount > 0 &&
        (no_op || (ocount == tcount && otype == ttype)) &&
        (!rbuf || (rcount == tcount && rtype == ttype))) {
        struct fy_dtype *dt = cached ? s_acc_pair.dt : fy_dtype_get(ttype);
        if (!cached && dt && dt->builtin && o->builtin &&
            fy_op_valid_for_accumulate(o, dt)) {
            s_acc_pair.op = op;
            s_acc_pair.type = ttype;
            s_acc_pair.o = o;
            s_acc_pair.dt = dt;
            cached = true;
        }
        if (cached) {
            int rc =
                check_target(w, trank, tdisp, tcount, dt, &addr, &skip, fn);
            if (rc || skip)
                return rc;
            /* Not for a target on another node (active messages). */
            rc = w->peers[trank].direct
                     ? fy_rma_acc_flat_shm(obuf, rbuf, addr, tcount, dt, o)
                     : -EAGAIN;
            if (rc != -EAGAIN)
                return op_done(w, rc, fn);
        }
    }
    struct fy_dtype *odt = NULL, *rdt = NULL, *tdt;
    int rc = check_buf(w, tcount, ttype, &tdt, "target", fn);
    if (!rc && !no_op)
        rc = check_buf(w, ocount, otype, &odt, "origin", fn);
    if (!rc && rbuf)
        rc = check_buf(w, rcount, rtype, &rdt, "result", fn);
    if (rc)
        return rc;
    MPI_Count tbytes = tcount * tdt->size;
    /* Nothing to combine: no type to check the op against (MPICH agrees). */
    WCHECK(tbytes == 0 || fy_op_valid_for_accumulate(o, tdt), w, MPI_ERR_OP, fn,
           "op 0x%x cannot accumulate on the target datatype (predefined "
           "ops on one predefined type only)",
           (unsigned)op);
    WCHECK(no_op || ocount * odt->size == tbytes, w, MPI_ERR_TRUNCATE, fn,
           "origin has %lld bytes, target %lld",
           (long long)(ocount * odt->size), (long long)tbytes);
    WCHECK(!rbuf || rcount * rdt->size == tbytes, w, MPI_ERR_TRUNCATE, fn,
           "result has %lld bytes, target %lld",
           (long long)(rcount * rdt->size), (long long)tbytes);
    rc = check_target(w, trank, tdisp, tcount, tdt, &addr, &skip, fn);
    if (rc || skip)
        return rc;
    rc = fy_rma_acc(w, obuf, ocount, odt, rbuf, rcount, rdt, trank, addr,
                    tcount, tdt, o);
    return op_done(w, rc, fn);
}

FY_API int PMPI_Accumulate(const void *origin_addr, int origin_count,
                           MPI_Datatype origin_datatype, int target_rank,
                           MPI_Aint target_disp, int target_count,
                           MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    FY_MT_WIN(win);
    return rma_acc(origin_addr, origin_count, origin_datatype, NULL, 0,
                   MPI_DATATYPE_NULL, target_rank, target_disp, target_count,
                   target_datatype, op, win, __func__);
}
FY_ALIAS(MPI_Accumulate)

FY_API int PMPI_Accumulate_c(const void *origin_addr, MPI_Count origin_count,
                             MPI_Datatype origin_datatype, int target_rank,
                             MPI_Aint target_disp, MPI_Count target_count,
                             MPI_Datatype target_datatype, MPI_Op op,
                             MPI_Win win)
{
    FY_MT_WIN(win);
    return rma_acc(origin_addr, origin_count, origin_datatype, NULL, 0,
                   MPI_DATATYPE_NULL, target_rank, target_disp, target_count,
                   target_datatype, op, win, __func__);
}
FY_ALIAS(MPI_Accumulate_c)

/* Get_accumulate's body, for it and Rget_accumulate (the caller holds the
 * window's lock). */
static int get_acc(const void *obuf, MPI_Count ocount, MPI_Datatype otype,
                   void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int rank,
                   MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype,
                   MPI_Op op, MPI_Win win, const char *fn)
{
    /* A result of no bytes (zero count or a zero-size type) needs no
     * buffer; an invalid type is rma_acc's to report. */
    struct fy_dtype *rdt = fy_dtype_get(rtype);
    FY_CHECK(rbuf != NULL || rcount == 0 || (rdt && rdt->size == 0), NULL,
             MPI_ERR_BUFFER, fn, "result_addr is NULL");
    /* A zero-count result still makes this a get-accumulate. */
    static char none;
    return rma_acc(obuf, ocount, otype, rbuf ? rbuf : &none, rcount, rtype,
                   rank, disp, tcount, ttype, op, win, fn);
}

FY_API int PMPI_Get_accumulate(const void *origin_addr, int origin_count,
                               MPI_Datatype origin_datatype, void *result_addr,
                               int result_count, MPI_Datatype result_datatype,
                               int target_rank, MPI_Aint target_disp,
                               int target_count, MPI_Datatype target_datatype,
                               MPI_Op op, MPI_Win win)
{
    FY_MT_WIN(win);
    return get_acc(origin_addr, origin_count, origin_datatype, result_addr,
                   result_count, result_datatype, target_rank, target_disp,
                   target_count, target_datatype, op, win, __func__);
}
FY_ALIAS(MPI_Get_accumulate)

FY_API int PMPI_Get_accumulate_c(const void *origin_addr,
                                 MPI_Count origin_count,
                                 MPI_Datatype origin_datatype,
                                 void *result_addr, MPI_Count result_count,
                                 MPI_Datatype result_datatype, int target_rank,
                                 MPI_Aint target_disp, MPI_Count target_count,
                                 MPI_Datatype target_datatype, MPI_Op op,
                                 MPI_Win win)
{
    FY_MT_WIN(win);
    return get_acc(origin_addr, origin_count, origin_datatype, result_addr,
                   result_count, result_datatype, target_rank, target_disp,
                   target_count, target_datatype, op, win, __func__);
}
FY_ALIAS(MPI_Get_accumulate_c)

FY_API int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr,
                             MPI_Datatype datatype, int target_rank,
                             MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    FY_MT_WIN(win);
    const char *fn = __func__;
    FY_CHECK(result_addr != NULL, NULL, MPI_ERR_BUFFER, fn,
             "result_addr is NULL");
    return rma_acc(origin_addr, 1, datatype, result_addr, 1, datatype,
                   target_rank, target_disp, 1, datatype, op, win, fn);
}
FY_ALIAS(MPI_Fetch_and_op)

FY_API int PMPI_Compare_and_swap(const void *origin_addr,
                                 const void *compare_addr, void *result_addr,
                                 MPI_Datatype datatype, int target_rank,
                                 MPI_Aint target_disp, MPI_Win win)
{
    FY_MT_WIN(win);
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    struct fy_dtype *dt;
    int rc = check_buf(w, 1, datatype, &dt, "", fn);
    if (rc)
        return rc;
    WCHECK(dt->builtin && dt->size > 0 && dt->size <= 16 && dt->nsegs == 1, w,
           MPI_ERR_TYPE, fn,
           "datatype 0x%x is not a predefined integer-like type",
           (unsigned)datatype);
    WCHECK(origin_addr && compare_addr && result_addr, w, MPI_ERR_BUFFER, fn,
           "a buffer is NULL");
    uint64_t addr;
    bool skip;
    rc = check_target(w, target_rank, target_disp, 1, dt, &addr, &skip, fn);
    if (rc || skip)
        return rc;
    rc = fy_rma_cas(w, origin_addr, compare_addr, result_addr, dt, target_rank,
                    addr);
    return op_done(w, rc, fn);
}
FY_ALIAS(MPI_Compare_and_swap)

/* Request-based forms: the operation is complete when the call returns
 * (the window's memory was reached directly), so the request is born
 * complete. MPI: only inside a passive-target epoch. */
static int born_done(MPI_Win win, int rc, MPI_Request *request, const char *fn)
{
    if (rc)
        return rc;
    if (fy_mreq_register(FY_MREQ_DONE_SEND, request) != 0) {
        struct fy_rma_win *w = fy_rma_win_get(win);
        return WERR(w, MPI_ERR_NO_MEM, fn, "out of memory for a request");
    }
    return MPI_SUCCESS;
}

static int check_req(MPI_Win win, int rank, MPI_Request *request,
                     const char *fn)
{
    FY_CHECK_INIT(fn);
    GET_WIN(w, win, fn);
    WCHECK_PTR(request, w, fn);
    WCHECK(rank == MPI_PROC_NULL || rank < 0 || rank >= w->size ||
               w->lock_all || w->lockmode[rank],
           w, MPI_ERR_RMA_SYNC, fn,
           "request-based operations need a passive-target epoch (lock or "
           "lock_all) to rank %d",
           rank);
    return MPI_SUCCESS;
}

/* A request-based put or get: complete, its buffer the user's again,
 * when the call returns (w->local_done: rma/am.c's direct puts wait for
 * their bytes to be sent, its direct gets for their bytes to arrive). */
static int req_put_get(void *obuf, MPI_Count ocount, MPI_Datatype otype,
                       int trank, MPI_Aint tdisp, MPI_Count tcount,
                       MPI_Datatype ttype, MPI_Win win, bool get,
                       const char *fn)
{
    struct fy_rma_win *w = fy_rma_win_get(win); /* check_req found it */
    w->local_done = true;
    int rc = rma_put_get(obuf, ocount, otype, trank, tdisp, tcount, ttype, win,
                         get, fn);
    w->local_done = false;
    return rc;
}

FY_API int PMPI_Rput(const void *origin_addr, int origin_count,
                     MPI_Datatype origin_datatype, int target_rank,
                     MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Win win,
                     MPI_Request *request)
{
    FY_MT_WIN(win);
    int rc = check_req(win, target_rank, request, __func__);
    if (!rc)
        rc = req_put_get((void *)origin_addr, origin_count, origin_datatype,
                         target_rank, target_disp, target_count,
                         target_datatype, win, false, __func__);
    return rc ? rc : born_done(win, rc, request, __func__);
}
FY_ALIAS(MPI_Rput)

FY_API int PMPI_Rput_c(const void *origin_addr, MPI_Count origin_count,
                       MPI_Datatype origin_datatype, int target_rank,
                       MPI_Aint target_disp, MPI_Count target_count,
                       MPI_Datatype target_datatype, MPI_Win win,
                       MPI_Request *request)
{
    FY_MT_WIN(win);
    int rc = check_req(win, target_rank, request, __func__);
    if (!rc)
        rc = req_put_get((void *)origin_addr, origin_count, origin_datatype,
                         target_rank, target_disp, target_count,
                         target_datatype, win, false, __func__);
    return rc ? rc : born_done(win, rc, request, __func__);
}
FY_ALIAS(MPI_Rput_c)

FY_API int PMPI_Rget(void *origin_addr, int origin_count,
                     MPI_Datatype origin_datatype, int target_rank,
                     MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Win win,
                     MPI_Request *request)
{
    FY_MT_WIN(win);
    int rc = check_req(win, target_rank, request, __func__);
    if (!rc)
        rc = req_put_get(origin_addr, origin_count, origin_datatype,
                         target_rank, target_disp, target_count,
                         target_datatype, win, true, __func__);
    return rc ? rc : born_done(win, rc, request, __func__);
}
FY_ALIAS(MPI_Rget)

FY_API int PMPI_Rget_c(void *origin_addr, MPI_Count origin_count,
                       MPI_Datatype origin_datatype, int target_rank,
                       MPI_Aint target_disp, MPI_Count target_count,
                       MPI_Datatype target_datatype, MPI_Win win,
                       MPI_Request *request)
{
    FY_MT_WIN(win);
    int rc = check_req(win, target_rank, request, __func__);
    if (!rc)
        rc = req_put_get(origin_addr, origin_count, origin_datatype,
                         target_rank, target_disp, target_count,
                         target_datatype, win, true, __func__);
    return rc ? rc : born_done(win, rc, request, __func__);
}
FY_ALIAS(MPI_Rget_c)

FY_API int PMPI_Raccumulate(const void *origin_addr, int origin_count,
                            MPI_Datatype origin_datatype, int target_rank,
                            MPI_Aint target_disp, int target_count,
                            MPI_Datatype target_datatype, MPI_Op op,
                            MPI_Win win, MPI_Request *request)
{
    FY_MT_WIN(win);
    int rc = check_req(win, target_rank, request, __func__);
    if (!rc)
        rc = rma_acc(origin_addr, origin_count, origin_datatype, NULL, 0,
                     MPI_DATATYPE_NULL, target_rank, target_disp, target_count,
                     target_datatype, op, win, __func__);
    return rc ? rc : born_done(win, rc, request, __func__);
}
FY_ALIAS(MPI_Raccumulate)

FY_API int PMPI_Raccumulate_c(const void *origin_addr, MPI_Count origin_count,
                              MPI_Datatype origin_datatype, int target_rank,
                              MPI_Aint target_disp, MPI_Count target_count,
                              MPI_Datatype target_datatype, MPI_Op op,
                              MPI_Win win, MPI_Request *request)
{
    FY_MT_WIN(win);
    int rc = check_req(win, target_rank, request, __func__);
    if (!rc)
        rc = rma_acc(origin_addr, origin_count, origin_datatype, NULL, 0,
                     MPI_DATATYPE_NULL, target_rank, target_disp, target_count,
                     target_datatype, op, win, __func__);
    return rc ? rc : born_done(win, rc, request, __func__);
}
FY_ALIAS(MPI_Raccumulate_c)

FY_API int PMPI_Rget_accumulate(const void *origin_addr, int origin_count,
                                MPI_Datatype origin_datatype, void *result_addr,
                                int result_count, MPI_Datatype result_datatype,
                                int target_rank, MPI_Aint target_disp,
                                int target_count, MPI_Datatype target_datatype,
                                MPI_Op op, MPI_Win win, MPI_Request *request)
{
    FY_MT_WIN(win);
    int rc = check_req(win, target_rank, request, __func__);
    if (!rc)
        rc = get_acc(origin_addr, origin_count, origin_datatype, result_addr,
                     result_count, result_datatype, target_rank, target_disp,
                     target_count, target_datatype, op, win, __func__);
    return rc ? rc : born_done(win, rc, request, __func__);
}
FY_ALIAS(MPI_Rget_accumulate)

FY_API int PMPI_Rget_accumulate_c(const void *origin_addr,
                                  MPI_Count origin_count,
                                  MPI_Datatype origin_datatype,
                                  void *result_addr, MPI_Count result_count,
                                  MPI_Datatype result_datatype, int target_rank,
                                  MPI_Aint target_disp, MPI_Count target_count,
                                  MPI_Datatype target_datatype, MPI_Op op,
                                  MPI_Win win, MPI_Request *request)
{
    FY_MT_WIN(win);
    int rc = check_req(win, target_rank, request, __func__);
    if (!rc)
        rc = get_acc(origin_addr, origin_count, origin_datatype, result_addr,
                     result_count, result_datatype, target_rank, target_disp,
                     target_count, target_datatype, op, win, __func__);
    return rc ? rc : born_done(win, rc, request, __func__);
}
FY_ALIAS(MPI_Rget_accumulate_c)
