/* SPDX-License-Identifier: MIT */
/* Attribute caching on communicators: keyvals with copy/delete callbacks,
 * a per-communicator list of (keyval, value), and the predefined
 * attributes of MPI_COMM_WORLD (MPI_TAG_UB, MPI_HOST, ...). */
#include "comm/comm_int.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "util/handle.h"

static struct fy_handle_table s_keyvals = FY_HANDLE_TABLE_INIT(FY_HT_KEYVAL);

/* Predefined attribute values. MPI hands out pointers to them, so they
 * must be objects with static storage. */
static int s_tag_ub = FY_TAG_UB;
static int s_host = MPI_PROC_NULL; /* no host process */
static int s_io = MPI_ANY_SOURCE;  /* every process can do I/O */
static int s_wtime_is_global = 0;  /* not promised across nodes */
static int s_universe_size;
static int s_lastusedcode = MPI_T_ERR_NOT_SUPPORTED; /* last class Ferry has */
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

struct fy_keyval *fy_keyval_get(int handle)
{
    return fy_handle_get(&s_keyvals, handle);
}

int fy_keyval_create(MPI_Comm_copy_attr_function *copy_fn,
                     MPI_Comm_delete_attr_function *delete_fn,
                     void *extra_state, struct fy_keyval **out)
{
    struct fy_keyval *kv = calloc(1, sizeof(*kv));
    if (!kv)
        return -ENOMEM;
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

static void fy_keyval_release(struct fy_keyval *kv)
{
    if (--kv->refcount > 0)
        return;
    free(kv);
}

void fy_keyval_free(struct fy_keyval *kv)
{
    /* The handle becomes invalid for the user at once; attributes still
     * set with this key keep the object (and its callbacks) alive. */
    fy_handle_release(&s_keyvals, kv->handle);
    fy_keyval_release(kv);
}

static struct fy_attr **fy_attr_find(struct fy_comm *c, struct fy_keyval *kv)
{
    for (struct fy_attr **p = &c->attrs; *p; p = &(*p)->next)
        if ((*p)->kv == kv)
            return p;
    return NULL;
}

/* Run the delete callback for one value; its MPI error code, if any. */
static int fy_attr_run_delete(struct fy_comm *c, struct fy_attr *a)
{
    if (!a->kv->delete_fn)
        return 0;
    return a->kv->delete_fn(c->handle, a->kv->handle, a->val,
                            a->kv->extra_state);
}

int fy_attr_set(struct fy_comm *c, struct fy_keyval *kv, void *val)
{
    struct fy_attr **p = fy_attr_find(c, kv);
    if (p) {
        int rc = fy_attr_run_delete(c, *p);
        if (rc != MPI_SUCCESS)
            return rc;
        (*p)->val = val;
        return 0;
    }
    struct fy_attr *a = malloc(sizeof(*a));
    if (!a)
        return MPI_ERR_NO_MEM;
    a->kv = kv;
    a->val = val;
    a->next = c->attrs;
    c->attrs = a;
    kv->refcount++;
    return 0;
}

bool fy_attr_get(struct fy_comm *c, struct fy_keyval *kv, void **val_out)
{
    struct fy_attr **p = fy_attr_find(c, kv);
    if (!p)
        return false;
    *val_out = (*p)->val;
    return true;
}

int fy_attr_delete(struct fy_comm *c, struct fy_keyval *kv, bool *found_out)
{
    struct fy_attr **p = fy_attr_find(c, kv);
    *found_out = p != NULL;
    if (!p)
        return 0;
    struct fy_attr *a = *p;
    int rc = fy_attr_run_delete(c, a);
    if (rc != MPI_SUCCESS)
        return rc; /* MPI: a failing delete callback keeps the attribute */
    *p = a->next;
    fy_keyval_release(a->kv);
    free(a);
    return 0;
}

int fy_attr_delete_all(struct fy_comm *c)
{
    /* Newest first, as MPI requires for MPI_COMM_SELF at finalize. */
    while (c->attrs) {
        struct fy_attr *a = c->attrs;
        int rc = fy_attr_run_delete(c, a);
        if (rc != MPI_SUCCESS)
            return rc;
        c->attrs = a->next;
        fy_keyval_release(a->kv);
        free(a);
    }
    return 0;
}

int fy_attr_copy_all(struct fy_comm *from, struct fy_comm *to)
{
    /* Walk oldest first so the copy's list keeps the same order. */
    int n = 0;
    for (struct fy_attr *a = from->attrs; a; a = a->next)
        n++;
    if (n == 0)
        return 0;
    struct fy_attr **v = malloc((size_t)n * sizeof(*v));
    if (!v)
        return MPI_ERR_NO_MEM;
    int i = n;
    for (struct fy_attr *a = from->attrs; a; a = a->next)
        v[--i] = a;
    int rc = 0;
    for (i = 0; i < n && rc == 0; i++) {
        struct fy_keyval *kv = v[i]->kv;
        if (!kv->copy_fn)
            continue;
        void *nval = NULL;
        int flag = 0;
        rc = kv->copy_fn(from->handle, kv->handle, kv->extra_state, v[i]->val,
                         &nval, &flag);
        if (rc == MPI_SUCCESS && flag)
            rc = fy_attr_set(to, kv, nval);
    }
    free(v);
    return rc;
}
