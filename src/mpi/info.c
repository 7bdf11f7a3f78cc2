/* SPDX-License-Identifier: MIT */
/* Info objects (ordered key/value lists with MPI's length limits), the
 * predefined MPI_INFO_ENV, MPI_Comm_get_info, and MPI_Alloc_mem /
 * MPI_Free_mem. Info objects are plain process-local data: created objects
 * get direct handles from a table of FY_HT_INFO; MPI_INFO_ENV is MPICH's
 * builtin handle 0x5c000001 and is read-only. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "mpi/mpi_impl.h"
#include "util/handle.h"

struct fy_info {
    MPI_Info handle;
    int n, cap;
    char **keys; /* insertion order, as MPI_Info_get_nthkey numbers them */
    char **vals;
};

static struct fy_handle_table s_infos = FY_HANDLE_TABLE_INIT(FY_HT_INFO);
static struct fy_info s_env = {.handle = MPI_INFO_ENV};
static bool s_env_filled;

static int info_find(const struct fy_info *in, const char *key)
{
    for (int i = 0; i < in->n; i++)
        if (strcmp(in->keys[i], key) == 0)
            return i;
    return -1;
}

int fy_info_put(struct fy_info *in, const char *key, const char *val)
{
    int i = info_find(in, key);
    char *v = strdup(val);
    if (!v)
        return -ENOMEM;
    if (i >= 0) {
        free(in->vals[i]);
        in->vals[i] = v;
        return 0;
    }
    char *k = strdup(key);
    if (!k)
        goto undo_val;
    if (in->n == in->cap) {
        int ncap = in->cap ? in->cap * 2 : 8;
        char **nk = realloc(in->keys, (size_t)ncap * sizeof(*nk));
        if (!nk)
            goto undo_key;
        in->keys = nk;
        char **nv = realloc(in->vals, (size_t)ncap * sizeof(*nv));
        if (!nv)
            goto undo_key;
        in->vals = nv;
        in->cap = ncap;
    }
    in->keys[in->n] = k;
    in->vals[in->n] = v;
    in->n++;
    return 0;
undo_key:
    free(k);
undo_val:
    free(v);
    return -ENOMEM;
}

const char *fy_info_lookup(const struct fy_info *in, const char *key)
{
    int i = in ? info_find(in, key) : -1;
    return i >= 0 ? in->vals[i] : NULL;
}

static void info_clear(struct fy_info *in)
{
    for (int i = 0; i < in->n; i++) {
        free(in->keys[i]);
        free(in->vals[i]);
    }
    free(in->keys);
    free(in->vals);
    in->keys = in->vals = NULL;
    in->n = in->cap = 0;
}

void fy_info_free(struct fy_info *in)
{
    if (!in || in == &s_env)
        return;
    fy_handle_release(&s_infos, in->handle);
    info_clear(in);
    free(in);
}

int fy_info_new(struct fy_info **out)
{
    struct fy_info *in = calloc(1, sizeof(*in));
    if (!in)
        return -ENOMEM;
    if (fy_handle_alloc(&s_infos, in, &in->handle) != 0) {
        free(in);
        return -ENOMEM;
    }
    *out = in;
    return 0;
}

int fy_info_dup(const struct fy_info *src, struct fy_info **out)
{
    struct fy_info *in;
    int rc = fy_info_new(&in);
    if (rc)
        return rc;
    for (int i = 0; src && i < src->n; i++)
        if ((rc = fy_info_put(in, src->keys[i], src->vals[i])) != 0) {
            fy_info_free(in);
            return rc;
        }
    *out = in;
    return 0;
}

MPI_Info fy_info_handle(const struct fy_info *in)
{
    return in->handle;
}

/* MPI_INFO_ENV: what mpiexec was asked to start, as far as this process
 * can tell (MPI 4.0 section 11.2.4 names the keys). Filled on first use. */
static void env_fill_now(void)
{
    char buf[MPI_MAX_INFO_VAL + 1];
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        (void)fy_info_put(&s_env, "command", buf);
        /* The arguments, space-separated (NULs in cmdline). */
        size_t first = strlen(buf) + 1;
        if (first < n) {
            for (size_t i = first; i + 1 < n; i++)
                if (buf[i] == '\0')
                    buf[i] = ' ';
            (void)fy_info_put(&s_env, "argv", buf + first);
        }
    }
    struct fy_comm *world = fy_comm_get(MPI_COMM_WORLD);
    snprintf(buf, sizeof(buf), "%d", world ? world->size : 1);
    (void)fy_info_put(&s_env, "maxprocs", buf);
    (void)fy_info_put(&s_env, "soft", buf);
    if (gethostname(buf, sizeof(buf)) == 0) {
        buf[sizeof(buf) - 1] = '\0';
        (void)fy_info_put(&s_env, "host", buf);
    }
    struct utsname u;
    if (uname(&u) == 0)
        (void)fy_info_put(&s_env, "arch", u.machine);
    if (getcwd(buf, sizeof(buf)))
        (void)fy_info_put(&s_env, "wdir", buf);
    (void)fy_info_put(&s_env, "thread_level", "MPI_THREAD_SINGLE");
}

/* Under MPI_THREAD_MULTIPLE the first use may come from engine-lock and
 * object-lock calls at once: fill under the object lock (innermost in the
 * order, util/mt.h). E1: the release store pairs with the acquire load,
 * so a thread that sees s_env_filled sees the filled object. */
static void env_fill(void)
{
    if (__atomic_load_n(&s_env_filled, __ATOMIC_ACQUIRE)) /* E1 */
        return;
    bool mt = fy_mt_on;
    if (mt)
        fy_mt_obj_lock();
    if (!s_env_filled) {
        env_fill_now();
        __atomic_store_n(&s_env_filled, true, __ATOMIC_RELEASE); /* E1 */
    }
    if (mt)
        fy_mt_obj_unlock();
}

struct fy_info *fy_info_get(MPI_Info h)
{
    if (h == MPI_INFO_ENV) {
        env_fill();
        return &s_env;
    }
    return fy_handle_get(&s_infos, h);
}

/* ---- entry points ----------------------------------------------------- */

#define GET_INFO(var, h, fn)                                                   \
    struct fy_info *var = fy_info_get(h);                                      \
    if (FY_UNLIKELY(!var))                                                     \
        return fy_mpi_err(NULL, MPI_ERR_INFO, fn, "invalid info object 0x%x",  \
                          (unsigned)(h));

#define CHECK_PTR(p, fn)                                                       \
    FY_CHECK((p) != NULL, NULL, MPI_ERR_ARG, fn, "%s is NULL", #p)

/* MPI: keys are 1..MPI_MAX_INFO_KEY characters (MPI_ERR_INFO_KEY). */
#define CHECK_KEY(key, fn)                                                     \
    do {                                                                       \
        CHECK_PTR(key, fn);                                                    \
        size_t kl_ = strnlen(key, MPI_MAX_INFO_KEY + 1);                       \
        FY_CHECK(kl_ > 0 && kl_ <= MPI_MAX_INFO_KEY, NULL, MPI_ERR_INFO_KEY,   \
                 fn, "key %s (at most MPI_MAX_INFO_KEY = %d characters)",      \
                 kl_ ? "too long" : "empty", MPI_MAX_INFO_KEY);                \
    } while (0)

/* The info calls work before MPI_Init / MPI_Session_init and after
 * MPI_Finalize (MPI 4.0 11.2.1 lists them): sessions take an info. */
FY_API int PMPI_Info_create(MPI_Info *info)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    CHECK_PTR(info, fn);
    struct fy_info *in;
    if (fy_info_new(&in) != 0)
        return fy_mpi_err(NULL, MPI_ERR_NO_MEM, fn,
                          "out of memory for an info object");
    *info = in->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Info_create)

FY_API int PMPI_Info_free(MPI_Info *info)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    CHECK_PTR(info, fn);
    FY_CHECK(*info != MPI_INFO_ENV, NULL, MPI_ERR_INFO, fn,
             "MPI_INFO_ENV is predefined and cannot be freed");
    GET_INFO(in, *info, fn);
    fy_info_free(in);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Info_free)

FY_API int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    GET_INFO(in, info, fn);
    CHECK_PTR(newinfo, fn);
    struct fy_info *out;
    if (fy_info_dup(in, &out) != 0)
        return fy_mpi_err(NULL, MPI_ERR_NO_MEM, fn,
                          "out of memory for an info object");
    *newinfo = out->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Info_dup)

FY_API int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    FY_CHECK(info != MPI_INFO_ENV, NULL, MPI_ERR_INFO, fn,
             "MPI_INFO_ENV is read-only");
    GET_INFO(in, info, fn);
    CHECK_KEY(key, fn);
    CHECK_PTR(value, fn);
    size_t vl = strnlen(value, MPI_MAX_INFO_VAL + 1);
    FY_CHECK(vl <= MPI_MAX_INFO_VAL, NULL, MPI_ERR_INFO_VALUE, fn,
             "value for key \"%s\" longer than MPI_MAX_INFO_VAL = %d", key,
             MPI_MAX_INFO_VAL);
    if (fy_info_put(in, key, value) != 0)
        return fy_mpi_err(NULL, MPI_ERR_NO_MEM, fn,
                          "out of memory for an info entry");
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Info_set)

FY_API int PMPI_Info_delete(MPI_Info info, const char *key)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    FY_CHECK(info != MPI_INFO_ENV, NULL, MPI_ERR_INFO, fn,
             "MPI_INFO_ENV is read-only");
    GET_INFO(in, info, fn);
    CHECK_KEY(key, fn);
    int i = info_find(in, key);
    FY_CHECK(i >= 0, NULL, MPI_ERR_INFO_NOKEY, fn, "no key \"%s\"", key);
    free(in->keys[i]);
    free(in->vals[i]);
    memmove(&in->keys[i], &in->keys[i + 1],
            (size_t)(in->n - i - 1) * sizeof(*in->keys));
    memmove(&in->vals[i], &in->vals[i + 1],
            (size_t)(in->n - i - 1) * sizeof(*in->vals));
    in->n--;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Info_delete)

FY_API int PMPI_Info_get(MPI_Info info, const char *key, int valuelen,
                         char *value, int *flag)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    GET_INFO(in, info, fn);
    CHECK_KEY(key, fn);
    CHECK_PTR(flag, fn);
    FY_CHECK(valuelen >= 0, NULL, MPI_ERR_ARG, fn, "valuelen %d is negative",
             valuelen);
    const char *v = fy_info_lookup(in, key);
    *flag = v != NULL;
    if (v) {
        CHECK_PTR(value, fn);
        /* MPI: at most valuelen characters, plus the terminating NUL. */
        size_t n = strnlen(v, (size_t)valuelen);
        memcpy(value, v, n);
        value[n] = '\0';
    }
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Info_get)

FY_API int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen,
                                char *value, int *flag)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    GET_INFO(in, info, fn);
    CHECK_KEY(key, fn);
    CHECK_PTR(buflen, fn);
    CHECK_PTR(flag, fn);
    FY_CHECK(*buflen >= 0, NULL, MPI_ERR_ARG, fn, "*buflen %d is negative",
             *buflen);
    const char *v = fy_info_lookup(in, key);
    *flag = v != NULL;
    if (!v)
        return MPI_SUCCESS;
    /* MPI 4.0: copy buflen - 1 characters at most, NUL-terminated; return
     * the size needed for the whole value, NUL included. */
    size_t len = strlen(v);
    if (*buflen > 0) {
        CHECK_PTR(value, fn);
        size_t n = FY_MIN(len, (size_t)*buflen - 1);
        memcpy(value, v, n);
        value[n] = '\0';
    }
    *buflen = (int)len + 1;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Info_get_string)

FY_API int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen,
                                  int *flag)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    GET_INFO(in, info, fn);
    CHECK_KEY(key, fn);
    CHECK_PTR(valuelen, fn);
    CHECK_PTR(flag, fn);
    const char *v = fy_info_lookup(in, key);
    *flag = v != NULL;
    if (v)
        *valuelen = (int)strlen(v);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Info_get_valuelen)

FY_API int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    GET_INFO(in, info, fn);
    CHECK_PTR(nkeys, fn);
    *nkeys = in->n;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Info_get_nkeys)

FY_API int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    GET_INFO(in, info, fn);
    CHECK_PTR(key, fn);
    FY_CHECK(n >= 0 && n < in->n, NULL, MPI_ERR_ARG, fn,
             "n = %d is not in [0, %d)", n, in->n);
    /* Keys are at most MPI_MAX_INFO_KEY characters (checked by set). */
    strcpy(key, in->keys[n]);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Info_get_nthkey)

/* Ferry keeps no communicator hints (MPI_Comm_set_info checks its info
 * argument and drops it, which MPI allows), so the info object returned
 * holds no keys; the caller frees it. */
/* MPI 4.0 11.2.4: a new info object with MPI_INFO_ENV's keys; when the
 * program passes its arguments, "command" and "argv" come from them
 * (argv[0] and the rest, space-separated) instead of /proc/self/cmdline.
 * Callable before MPI_Init and MPI_Session_init. */
FY_API int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    CHECK_PTR(info, fn);
    FY_CHECK(argc >= 0, NULL, MPI_ERR_ARG, fn, "argc %d is negative", argc);
    FY_CHECK(argc == 0 || argv != NULL, NULL, MPI_ERR_ARG, fn,
             "argv is NULL with argc %d", argc);
    env_fill();
    struct fy_info *in;
    FY_CHECK(fy_info_dup(&s_env, &in) == 0, NULL, MPI_ERR_NO_MEM, fn,
             "out of memory for an info object");
    int rc = 0;
    if (argc > 0 && argv[0]) {
        char buf[MPI_MAX_INFO_VAL + 1];
        rc = fy_info_put(in, "command", argv[0]);
        size_t off = 0;
        buf[0] = '\0';
        for (int i = 1; i < argc && argv[i] && off < sizeof(buf) - 1; i++) {
            int n = snprintf(buf + off, sizeof(buf) - off, "%s%s",
                             i > 1 ? " " : "", argv[i]);
            if (n < 0)
                break;
            off += (size_t)n < sizeof(buf) - off ? (size_t)n
                                                 : sizeof(buf) - off - 1;
        }
        if (!rc && argc > 1)
            rc = fy_info_put(in, "argv", buf);
    }
    if (rc) {
        fy_info_free(in);
        return fy_mpi_err(NULL, MPI_ERR_NO_MEM, fn,
                          "out of memory for an info object");
    }
    *info = fy_info_handle(in);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Info_create_env)

FY_API int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    FY_CHECK(info_used != NULL, c, MPI_ERR_ARG, fn, "info_used is NULL");
    struct fy_info *in;
    if (fy_info_new(&in) != 0)
        return fy_mpi_err(c, MPI_ERR_NO_MEM, fn,
                          "out of memory for an info object");
    *info_used = in->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Comm_get_info)

/* ---- memory ----------------------------------------------------------- */

/* Heap memory, cache-line aligned, page-aligned from a page on (a window
 * created on it then shares no page with other data: src/rma/remap.c moves
 * it onto shared memory whole). Ferry needs no registration, so the info
 * hints are accepted and ignored. */
FY_API int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    FY_CHECK(size >= 0, NULL, MPI_ERR_SIZE, fn, "size %ld is negative",
             (long)size);
    FY_CHECK(info == MPI_INFO_NULL || fy_info_get(info) != NULL, NULL,
             MPI_ERR_INFO, fn, "invalid info object 0x%x", (unsigned)info);
    CHECK_PTR(baseptr, fn);
    void *p = NULL;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (posix_memalign(&p, (size_t)size >= page ? page : 64,
                       size ? (size_t)size : 1) != 0)
        return fy_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "cannot allocate %ld bytes",
                          (long)size);
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Alloc_mem)

FY_API int PMPI_Free_mem(void *base)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    free(base);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Free_mem)
