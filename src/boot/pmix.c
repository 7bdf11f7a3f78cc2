/* SPDX-License-Identifier: MIT */
/* PMIx (Open MPI's mpirun/prterun, srun --mpi=pmix): the client library
 * is loaded at run time with dlopen("libpmix.so.2"), so libmpi does not
 * depend on it; its types come from Debian's libpmix-dev headers at build
 * time (without them this launcher is compiled out and a PMIx job fails
 * with a clear message). This node's ranks are PMIX_LOCAL_PEERS, never
 * guessed; keys go out with PMIx_Put(PMIX_GLOBAL) + PMIx_Commit, a fence
 * is PMIx_Fence over the namespace, and each rank's keys are read back
 * from its own proc. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot/boot.h"
#include "util/util.h"

#ifdef FERRY_HAVE_PMIX_H
#include <pmix.h>

static struct {
    void *lib;
    pmix_proc_t me;
    pmix_status_t (*init)(pmix_proc_t *, pmix_info_t *, size_t);
    pmix_status_t (*finalize)(const pmix_info_t *, size_t);
    pmix_status_t (*abort)(int, const char *, pmix_proc_t *, size_t);
    pmix_status_t (*put)(pmix_scope_t, const pmix_key_t, pmix_value_t *);
    pmix_status_t (*commit)(void);
    pmix_status_t (*fence)(const pmix_proc_t *, size_t, const pmix_info_t *,
                           size_t);
    pmix_status_t (*get)(const pmix_proc_t *, const pmix_key_t,
                         const pmix_info_t *, size_t, pmix_value_t **);
    const char *(*error_string)(pmix_status_t);
    void (*value_free)(pmix_value_t *, size_t);
    bool up;
} px;

static const char *px_err(pmix_status_t st)
{
    return px.error_string ? px.error_string(st) : "PMIx error";
}

static void px_value_release(pmix_value_t *v)
{
    if (v && px.value_free)
        px.value_free(v, 1); /* else a few bytes leak, once per get */
}

static int px_load(void)
{
    px.lib = dlopen("libpmix.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!px.lib) {
        FY_ERROR("started by a PMIx launcher, but libpmix.so.2 cannot be "
                 "loaded (%s): install Debian's libpmix2",
                 dlerror());
        return -ENOTSUP;
    }
    static const struct {
        const char *name;
        size_t off;
        bool optional;
    } syms[] = {
        {"PMIx_Init", offsetof(__typeof__(px), init), false},
        {"PMIx_Finalize", offsetof(__typeof__(px), finalize), false},
        {"PMIx_Abort", offsetof(__typeof__(px), abort), false},
        {"PMIx_Put", offsetof(__typeof__(px), put), false},
        {"PMIx_Commit", offsetof(__typeof__(px), commit), false},
        {"PMIx_Fence", offsetof(__typeof__(px), fence), false},
        {"PMIx_Get", offsetof(__typeof__(px), get), false},
        {"PMIx_Error_string", offsetof(__typeof__(px), error_string), true},
        {"PMIx_Value_free", offsetof(__typeof__(px), value_free), true},
    };
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        void *f = dlsym(px.lib, syms[i].name);
        if (!f && !syms[i].optional) {
            FY_ERROR("libpmix.so.2 has no %s", syms[i].name);
            return -ENOTSUP;
        }
        memcpy((char *)&px + syms[i].off, &f, sizeof(f));
    }
    return 0;
}

/* A job-level value (rank wildcard) or one of 'rank'. */
static int px_get(pmix_rank_t rank, const char *key, pmix_value_t **out)
{
    pmix_proc_t p = px.me;
    p.rank = rank;
    pmix_status_t st = px.get(&p, key, NULL, 0, out);
    if (st != PMIX_SUCCESS)
        return st == PMIX_ERR_NOT_FOUND ? -ENOENT : -EREMOTEIO;
    return 0;
}

static int px_get_u32(const char *key, uint32_t *out)
{
    pmix_value_t *v = NULL;
    int rc = px_get(PMIX_RANK_WILDCARD, key, &v);
    if (!rc) {
        if (v->type == PMIX_UINT32)
            *out = v->data.uint32;
        else if (v->type == PMIX_UINT16)
            *out = v->data.uint16;
        else
            rc = -EPROTO;
    }
    px_value_release(v);
    if (rc)
        FY_ERROR("PMIx launcher gives no usable %s", key);
    return rc;
}

/* PMIX_LOCAL_PEERS: "r,r,..." world ranks of this node. */
static int px_local_peers(struct fy_boot *b)
{
    pmix_value_t *v = NULL;
    int rc = px_get(PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS, &v);
    if (rc || v->type != PMIX_STRING || !v->data.string) {
        px_value_release(v);
        FY_ERROR("PMIx launcher gives no PMIX_LOCAL_PEERS; Ferry will not "
                 "guess which ranks share this node");
        return rc ? rc : -EPROTO;
    }
    int *node_of = malloc((size_t)b->size * sizeof(*node_of));
    if (!node_of) {
        px_value_release(v);
        return -ENOMEM;
    }
    /* Node ids: 0 for ranks listed here, 1 for the rest. */
    for (int r = 0; r < b->size; r++)
        node_of[r] = 1;
    const char *p = v->data.string;
    rc = 0;
    while (*p && !rc) {
        char *end;
        long r = strtol(p, &end, 10);
        if (end == p || r < 0 || r >= b->size || (*end && *end != ',')) {
            FY_ERROR("PMIx PMIX_LOCAL_PEERS '%.80s' is malformed",
                     v->data.string);
            rc = -EPROTO;
            break;
        }
        node_of[r] = 0;
        p = *end ? end + 1 : end;
    }
    if (!rc && node_of[b->rank] != 0) {
        FY_ERROR("PMIx PMIX_LOCAL_PEERS '%.80s' does not list this rank",
                 v->data.string);
        rc = -EPROTO;
    }
    px_value_release(v);
    if (!rc)
        rc = fy_boot_node_from_map(b, node_of);
    free(node_of);
    return rc;
}

static int pmix_init(struct fy_boot *b)
{
    int rc = px_load();
    if (rc)
        return rc;
    pmix_status_t st = px.init(&px.me, NULL, 0);
    if (st != PMIX_SUCCESS) {
        FY_ERROR("PMIx_Init failed: %s; is the PMIx server of the launcher "
                 "that set PMIX_NAMESPACE reachable?",
                 px_err(st));
        return -ECONNREFUSED;
    }
    px.up = true;
    uint32_t size;
    if ((rc = px_get_u32(PMIX_JOB_SIZE, &size)))
        return rc;
    if (size < 1 || size > (1u << 24) || px.me.rank >= size) {
        FY_ERROR("PMIx launcher gives rank %u of %u", px.me.rank, size);
        return -EPROTO;
    }
    b->size = (int)size;
    b->rank = (int)px.me.rank;
    fy_log_rank = b->rank;
    b->ncpus = fy_online_cpus();
    snprintf(b->jobid, sizeof(b->jobid), "%.63s", px.me.nspace);
    if ((rc = px_local_peers(b)))
        return rc;
    return fy_boot_node_setup(b, &fy_boot_pmix_ops);
}

static int pmix_put(const char *key, const char *value)
{
    char k[PMIX_MAX_KEYLEN + 1];
    if (!*key || strlen(key) + 6 > PMIX_MAX_KEYLEN ||
        strlen(value) >= FY_BOOT_VALUE_MAX)
        return -E2BIG;
    snprintf(k, sizeof(k), "ferry.%s", key);
    pmix_value_t v;
    memset(&v, 0, sizeof(v));
    v.type = PMIX_STRING;
    v.data.string = (char *)value;
    pmix_status_t st = px.put(PMIX_GLOBAL, k, &v);
    if (st == PMIX_SUCCESS)
        st = px.commit();
    if (st != PMIX_SUCCESS) {
        FY_ERROR("PMIx_Put of '%s': %s", k, px_err(st));
        return -EREMOTEIO;
    }
    return 0;
}

static int pmix_get(int rank, const char *key, char *value_out, size_t len)
{
    char k[PMIX_MAX_KEYLEN + 1];
    if (rank < 0 || rank >= fy_boot.size)
        return -EINVAL;
    if (!*key || strlen(key) + 6 > PMIX_MAX_KEYLEN)
        return -E2BIG;
    snprintf(k, sizeof(k), "ferry.%s", key);
    pmix_value_t *v = NULL;
    int rc = px_get((pmix_rank_t)rank, k, &v);
    if (!rc) {
        if (v->type != PMIX_STRING || !v->data.string)
            rc = -EPROTO;
        else if (strlen(v->data.string) >= len)
            rc = -ENOSPC;
        else
            strcpy(value_out, v->data.string);
    }
    px_value_release(v);
    return rc;
}

static int pmix_fence(void)
{
    pmix_proc_t all = px.me;
    all.rank = PMIX_RANK_WILDCARD;
    pmix_status_t st = px.fence(&all, 1, NULL, 0);
    if (st != PMIX_SUCCESS) {
        FY_ERROR("PMIx_Fence: %s", px_err(st));
        return -EREMOTEIO;
    }
    return 0;
}

static void pmix_finalize(void)
{
    if (px.up)
        px.finalize(NULL, 0);
    px.up = false;
    /* The library keeps threads of its own: never dlclose it. */
}

static void pmix_abort(int code, const char *msg)
{
    if (px.up)
        px.abort(code, msg ? msg : "MPI_Abort", NULL, 0);
}

static bool pmix_detect(void)
{
    return getenv("PMIX_NAMESPACE") && getenv("PMIX_RANK");
}

const struct fy_boot_ops fy_boot_pmix_ops = {
    .name = "pmix",
    .detect = pmix_detect,
    .init = pmix_init,
    .kvs_put = pmix_put,
    .kvs_get = pmix_get,
    .fence = pmix_fence,
    .finalize = pmix_finalize,
    .abort = pmix_abort,
};

#else /* !FERRY_HAVE_PMIX_H */

static bool pmix_detect(void)
{
    return getenv("PMIX_NAMESPACE") && getenv("PMIX_RANK");
}

static int pmix_init(struct fy_boot *b)
{
    (void)b;
    FY_ERROR("started by a PMIx launcher, but this Ferry was built without "
             "PMIx headers (Debian's libpmix-dev); use mpiexec.hydra, "
             "srun --mpi=pmi2 or Ferry's mpiexec");
    return -ENOTSUP;
}

const struct fy_boot_ops fy_boot_pmix_ops = {
    .name = "pmix",
    .detect = pmix_detect,
    .init = pmix_init,
};

#endif
