/* SPDX-License-Identifier: MIT */
/* Attribute caching: keyvals with copy/delete callbacks, a per-object list
 * of (keyval, value) that communicators, datatypes and windows each hold,
 * and the predefined attributes of MPI_COMM_WORLD (MPI_TAG_UB, ...). */
#include "comm/comm_int.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "util/handle.h"
#include "util/mt.h"

static struct fy_handle_table s_keyvals = FY_HANDLE_TABLE_INIT(FY_HT_KEYVAL);

/* Predefined attribute values. MPI hands out pointers to them, so they
 * must be objects with static storage. */
static int s_tag_ub = FY_TAG_UB;
static int s_host = MPI_PROC_NULL; /* no host process */
static int s_io = MPI_ANY_SOURCE;  /* every process can do I/O */
static int s_wtime_is_global = 0;  /* not promised across nodes */
static int s_universe_size;
/* MPI: at least MPI_ERR_LASTCODE; user classes and codes are numbered
 * above it (src/mpi/err.c). */
static int s_lastusedcode = MPI_ERR_LASTCODE;
static int s_appnum = 0;

int *fy_attr_predefined(int keyval)
{
    switch (keyval) {
    case MPI_TAG_UB:
        return &s_tag_ub;
    case MPI_HOST:
        return &s_host;
    case MPI_IO:
        return &s_io;
    case MPI_WTIME_IS_GLOBAL:
        return &s_wtime_is_global;
    case MPI_UNIVERSE_SIZE:
        s_universe_size = fy_comm_wsize;
        return &s_universe_size;
    case MPI_LASTUSEDCODE:
        return &s_lastusedcode;
    case MPI_APPNUM:
        return &s_appnum;
    default:
        return NULL;
    }
}

/* MPI_COMM_DUP_FN / MPI_DUP_FN in MPICH's header name this symbol, so
 * MPICH-built binaries call it through our library: copy the value.
 * (Exported: it must also be listed in libmpi.map.) */
__attribute__((visibility("default"))) int
MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attr_in,
            void *attr_out, int *flag)
{
    (void)oldcomm;
    (void)keyval;
    (void)extra_state;
    *(void **)attr_out = attr_in;
    *flag = 1;
    return MPI_SUCCESS;
}

struct fy_keyval *fy_keyval_find(int handle, enum fy_attr_kind kind)
{
    struct fy_keyval *kv = fy_handle_get(&s_keyvals, handle);
    if (!kv || kv->kind != kind)
        return NULL;
    return kv;
}

struct fy_keyval *fy_keyval_get(int handle, enum fy_attr_kind kind)
{
    struct fy_keyval *kv = fy_keyval_find(handle, kind);
    return kv && !kv->freed ? kv : NULL;
}

int fy_keyval_create(enum fy_attr_kind kind, fy_attr_copy_fn *copy_fn,
                     fy_attr_delete_fn *delete_fn, void *extra_state,
                     struct fy_keyval **out)
{
    struct fy_keyval *kv = calloc(1, sizeof(*kv));
    if (!kv)
        return -ENOMEM;
    kv->kind = kind;
    kv->copy_fn = copy_fn;
    kv->delete_fn = delete_fn;
    kv->extra_state = extra_state;
    kv->refcount = 1;
    if (fy_handle_alloc(&s_keyvals, kv, &kv->handle) != 0) {
        free(kv);
        return -ENOMEM;
    }
    *out = kv;
    return 0;
}

/* The handle goes back to the table only with the last reference: until
 * then callbacks still receive it, and it must not name another keyval. */
static void fy_keyval_release(struct fy_keyval *kv)
{
    if (fy_mt_ref_dec(&kv->refcount) > 0)
        return;
    fy_handle_release(&s_keyvals, kv->handle);
    free(kv);
}

void fy_keyval_free(struct fy_keyval *kv)
{
    /* No new attribute may use the key from now on; attributes still set
     * with it keep the object (and its callbacks) alive. The user's
     * reference goes once, however often it is freed meanwhile. */
    if (kv->freed)
        return;
    kv->freed = true;
    fy_keyval_release(kv);
}

static struct fy_attr **fy_attr_find(struct fy_attr **list,
                                     const struct fy_keyval *kv)
{
    for (struct fy_attr **p = list; *p; p = &(*p)->next)
        if ((*p)->kv == kv)
            return p;
    return NULL;
}

/* Run the delete callback for one value; its MPI error code, if any. */
static int fy_attr_run_delete(int obj, const struct fy_attr *a)
{
    if (!a->kv->delete_fn)
        return 0;
    /* User code: called without the object lock (util/mt.h). */
    int od = fy_mt_callback_begin();
    int rc = a->kv->delete_fn(obj, a->kv->handle, a->val, a->kv->extra_state);
    fy_mt_callback_end(od);
    return rc;
}

static void fy_attr_destroy(struct fy_attr *a)
{
    fy_keyval_release(a->kv);
    free(a);
}

/* Callbacks may set, get or delete attributes on the very object whose
 * list is being changed, so an attribute is unlinked before its delete
 * callback runs and no list pointer is held across a callback. */
int fy_attr_set(struct fy_attr **list, int obj, struct fy_keyval *kv, void *val)
{
    struct fy_attr **p = fy_attr_find(list, kv);
    if (p) {
        struct fy_attr *a = *p;
        *p = a->next;
        int rc = fy_attr_run_delete(obj, a);
        struct fy_attr **again = fy_attr_find(list, kv);
        if (rc != MPI_SUCCESS || again) {
            /* Failed: the old value stays. Or the callback set this key
             * itself: ours, the later set, replaces its value. */
            if (rc == MPI_SUCCESS)
                (*again)->val = val;
            if (rc != MPI_SUCCESS && !again) {
                a->next = *list;
                *list = a;
            } else {
                fy_attr_destroy(a);
            }
            return rc;
        }
        a->val = val;
        a->next = *list;
        *list = a;
        return 0;
    }
    struct fy_attr *a = malloc(sizeof(*a));
    if (!a)
        return MPI_ERR_NO_MEM;
    a->kv = kv;
    a->val = val;
    a->next = *list;
    *list = a;
    fy_mt_ref_inc(&kv->refcount);
    return 0;
}

bool fy_attr_get(struct fy_attr *const *list, const struct fy_keyval *kv,
                 void **val_out)
{
    for (const struct fy_attr *a = *list; a; a = a->next) {
        if (a->kv == kv) {
            *val_out = a->val;
            return true;
        }
    }
    return false;
}

int fy_attr_delete(struct fy_attr **list, int obj, struct fy_keyval *kv,
                   bool *found_out)
{
    struct fy_attr **p = fy_attr_find(list, kv);
    *found_out = p != NULL;
    if (!p)
        return 0;
    struct fy_attr *a = *p;
    *p = a->next;
    int rc = fy_attr_run_delete(obj, a);
    if (rc != MPI_SUCCESS && !fy_attr_find(list, kv)) {
        /* MPI: a failing delete callback keeps the attribute. */
        a->next = *list;
        *list = a;
        return rc;
    }
    fy_attr_destroy(a);
    return rc;
}

int fy_attr_delete_all(struct fy_attr **list, int obj)
{
    /* Newest first, as MPI requires for MPI_COMM_SELF at finalize. An
     * attribute a callback adds meanwhile is deleted in turn. */
    while (*list) {
        struct fy_attr *a = *list;
        *list = a->next;
        int rc = fy_attr_run_delete(obj, a);
        if (rc != MPI_SUCCESS) {
            a->next = *list;
            *list = a;
            return rc;
        }
        fy_attr_destroy(a);
    }
    return 0;
}

int fy_attr_copy_all(struct fy_attr *const *from, int from_obj,
                     struct fy_attr **to, int to_obj)
{
    /* Snapshot (keyval, value) pairs oldest first, each keyval held: a copy
     * callback may change the source's list under us. */
    int n = 0;
    for (const struct fy_attr *a = *from; a; a = a->next)
        n++;
    if (n == 0)
        return 0;
    struct fy_attr *v = malloc((size_t)n * sizeof(*v));
    if (!v)
        return MPI_ERR_NO_MEM;
    int i = n;
    for (const struct fy_attr *a = *from; a; a = a->next) {
        v[--i] = *a;
        fy_mt_ref_inc(&a->kv->refcount);
    }
    int rc = 0;
    for (i = 0; i < n; i++) {
        struct fy_keyval *kv = v[i].kv;
        if (rc == 0 && kv->copy_fn) {
            void *nval = NULL;
            int flag = 0;
            int od = fy_mt_callback_begin(); /* user code: no object lock */
            rc = kv->copy_fn(from_obj, kv->handle, kv->extra_state, v[i].val,
                             &nval, &flag);
            fy_mt_callback_end(od);
            if (rc == MPI_SUCCESS && flag)
                rc = fy_attr_set(to, to_obj, kv, nval);
        }
        fy_keyval_release(kv);
    }
    free(v);
    return rc;
}
