/* SPDX-License-Identifier: MIT */
/* The MPI tool information interface (MPI 4.0 chapter 15): every FERRY_*
 * setting is a read-only control variable named as in the environment
 * ("FERRY_EAGER_MAX"), every protocol counter of fy_proto_pvars() a
 * performance variable ("ferry_eager_mailbox_msgs"), and there are no
 * enumerations and no events. Works before MPI_Init and after
 * MPI_Finalize. MPI_T_init_thread gives the level asked for; MULTIPLE
 * turns on the library lock every entry point takes (util/mt.h), as
 * MPI_Init_thread does. MPI_T calls return their
 * error codes without calling any error handler (MPI 4.0 15.3). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"
#include "proto/proto.h"
#include "util/tuned.h"

/* Handles and sessions are heap objects on lists, so a handle from the
 * user is looked up before it is used: a stale or foreign one gives
 * MPI_T_ERR_INVALID_HANDLE instead of a wild read. */
struct MPIR_T_cvar_handle_s {
    struct MPIR_T_cvar_handle_s *next;
    int index; /* into fy_env */
    int count; /* elements a read stores (a string's bytes, NUL included) */
};

/* A performance variable bound to a session. Counters only grow; the
 * handle reads the live value minus 'base', so a reset (base = live) is
 * private to the handle: other sessions and FERRY_STATS see no change. */
struct MPIR_T_pvar_handle_s {
    struct MPIR_T_pvar_handle_s *next;
    int index; /* into fy_proto_pvars() */
    uint64_t base;
};

struct MPIR_T_pvar_session_s {
    struct MPIR_T_pvar_session_s *next;
    struct MPIR_T_pvar_handle_s *handles;
};

static int s_refs; /* MPI_T_init_thread calls not yet finalized */
static struct MPIR_T_cvar_handle_s *s_cvar_handles;
static struct MPIR_T_pvar_session_s *s_sessions;

/* MPI_T_PVAR_ALL_HANDLES names no handle of its own. */
static struct MPIR_T_pvar_handle_s s_all_handles;
FY_API struct MPIR_T_pvar_handle_s *const MPI_T_PVAR_ALL_HANDLES =
    &s_all_handles;

/* The categories: settings (every cvar) and protocols (every pvar). */
enum { CAT_SETTINGS, CAT_PROTOCOLS, CAT_COUNT };
static const char *const cat_names[CAT_COUNT] = {"ferry_settings",
                                                 "ferry_protocols"};
static const char *const cat_descs[CAT_COUNT] = {
    "Ferry's FERRY_* environment variables, read at MPI_Init",
    "per-rank message counters, by protocol and by mechanism, counted by "
    "the receiver"};

#define CHECK_T_INIT()                                                         \
    do {                                                                       \
        if (s_refs <= 0)                                                       \
            return MPI_T_ERR_NOT_INITIALIZED;                                  \
    } while (0)

/* The MPI_T rule for strings out: nothing when len is NULL; only the
 * length needed (NUL included) when str is NULL or *len is 0; else at
 * most *len - 1 characters and a NUL, and *len = what was stored. */
static void put_string(const char *src, char *str, int *len)
{
    FY_MT_ENTER();
    if (!len)
        return;
    size_t need = strlen(src) + 1;
    if (!str || *len <= 0) {
        *len = (int)need;
        return;
    }
    size_t n = need <= (size_t)*len ? need : (size_t)*len;
    memcpy(str, src, n - 1);
    str[n - 1] = '\0';
    *len = (int)n;
}

static int pvar_table(const struct fy_pvar **out)
{
    return fy_proto_pvars(out);
}

/* ---- initialisation ----------------------------------------------------- */

FY_API int PMPI_T_init_thread(int required, int *provided)
{
    FY_MT_ENTER();
    if (!provided || required < MPI_THREAD_SINGLE ||
        required > MPI_THREAD_MULTIPLE)
        return MPI_T_ERR_INVALID;
    /* Before MPI_Init the settings are read here (MPI_Init reads them
     * again); after it they are the ones in force. A malformed FERRY_*
     * variable, which would fail MPI_Init, fails this too. */
    if (fy_mpi_state == 0 && s_refs == 0 && fy_env_load() != 0)
        return MPI_T_ERR_CANNOT_INIT;
    s_refs++;
    *provided = required;
    fy_mpi_thread_level_use(required);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_init_thread)

static void session_free(struct MPIR_T_pvar_session_s *s)
{
    while (s->handles) {
        struct MPIR_T_pvar_handle_s *h = s->handles;
        s->handles = h->next;
        free(h);
    }
    free(s);
}

FY_API int PMPI_T_finalize(void)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    if (--s_refs > 0)
        return MPI_SUCCESS;
    /* The last finalize ends every handle and session. */
    while (s_cvar_handles) {
        struct MPIR_T_cvar_handle_s *h = s_cvar_handles;
        s_cvar_handles = h->next;
        free(h);
    }
    while (s_sessions) {
        struct MPIR_T_pvar_session_s *s = s_sessions;
        s_sessions = s->next;
        session_free(s);
    }
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_finalize)

/* ---- enumerations: none exist ------------------------------------------- */

FY_API int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name,
                                int *name_len)
{
    FY_MT_ENTER();
    (void)enumtype;
    (void)num;
    (void)name;
    (void)name_len;
    CHECK_T_INIT();
    return MPI_T_ERR_INVALID_HANDLE;
}
FY_ALIAS(MPI_T_enum_get_info)

FY_API int PMPI_T_enum_get_item(MPI_T_enum enumtype, int indx, int *value,
                                char *name, int *name_len)
{
    FY_MT_ENTER();
    (void)enumtype;
    (void)indx;
    (void)value;
    (void)name;
    (void)name_len;
    CHECK_T_INIT();
    return MPI_T_ERR_INVALID_HANDLE;
}
FY_ALIAS(MPI_T_enum_get_item)

/* ---- control variables: the FERRY_* table ------------------------------- */

static MPI_Datatype cvar_type(const struct fy_env_var *v)
{
    switch (v->type) {
    case FY_ENV_BOOL:
        return MPI_INT;
    case FY_ENV_STRING:
        return MPI_CHAR;
    case FY_ENV_INT:
    case FY_ENV_SIZE:
        break;
    }
    return MPI_LONG_LONG;
}

/* Room for a writable string setting (FERRY_PROTO), its NUL included. */
#define FY_CVAR_STR_MAX 32

/* A string setting's value ("" when unset and without a default). */
static const char *cvar_string(int index)
{
    const char *s = fy_env_str((enum fy_env_id)index);
    return s ? s : "";
}

FY_API int PMPI_T_cvar_get_num(int *num_cvar)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    if (!num_cvar)
        return MPI_T_ERR_INVALID;
    *num_cvar = FY_ENV_COUNT;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_cvar_get_num)

FY_API int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len,
                                int *verbosity, MPI_Datatype *datatype,
                                MPI_T_enum *enumtype, char *desc, int *desc_len,
                                int *bind, int *scope)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    if (cvar_index < 0 || cvar_index >= FY_ENV_COUNT)
        return MPI_T_ERR_INVALID_INDEX;
    const struct fy_env_var *v = &fy_env[cvar_index];
    put_string(v->name, name, name_len);
    put_string(v->help, desc, desc_len);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_TUNER_BASIC;
    if (datatype)
        *datatype = cvar_type(v);
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    /* Read once at MPI_Init; the protocol choices may then be written
     * (per process: the receiver copes with whatever its sender picks). */
    if (scope)
        *scope = fy_proto_setting_writable(cvar_index) ? MPI_T_SCOPE_LOCAL
                                                       : MPI_T_SCOPE_READONLY;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_cvar_get_info)

FY_API int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    if (!name || !cvar_index)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < FY_ENV_COUNT; i++)
        if (!strcmp(fy_env[i].name, name)) {
            *cvar_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}
FY_ALIAS(MPI_T_cvar_get_index)

FY_API int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle,
                                    MPI_T_cvar_handle *handle, int *count)
{
    FY_MT_ENTER();
    (void)obj_handle; /* MPI_T_BIND_NO_OBJECT: ignored */
    CHECK_T_INIT();
    if (cvar_index < 0 || cvar_index >= FY_ENV_COUNT)
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    struct MPIR_T_cvar_handle_s *h = calloc(1, sizeof(*h));
    if (!h)
        return MPI_T_ERR_MEMORY;
    h->index = cvar_index;
    /* A string that may be written holds any of its values (FERRY_PROTO:
     * the longest is 9 bytes with its NUL). */
    h->count = fy_env[cvar_index].type != FY_ENV_STRING ? 1
               : fy_proto_setting_writable(cvar_index)
                   ? FY_CVAR_STR_MAX
                   : (int)strlen(cvar_string(cvar_index)) + 1;
    h->next = s_cvar_handles;
    s_cvar_handles = h;
    *handle = h;
    *count = h->count;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_cvar_handle_alloc)

/* The live handle h, or NULL (with *prev_out the link that points at it). */
static struct MPIR_T_cvar_handle_s *
cvar_handle_find(MPI_T_cvar_handle h, struct MPIR_T_cvar_handle_s ***prev_out)
{
    for (struct MPIR_T_cvar_handle_s **p = &s_cvar_handles; *p; p = &(*p)->next)
        if (*p == h) {
            if (prev_out)
                *prev_out = p;
            return h;
        }
    return NULL;
}

FY_API int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    struct MPIR_T_cvar_handle_s **prev;
    if (!handle || !cvar_handle_find(*handle, &prev))
        return MPI_T_ERR_INVALID_HANDLE;
    *prev = (*handle)->next;
    free(*handle);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_cvar_handle_free)

FY_API int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    struct MPIR_T_cvar_handle_s *h = cvar_handle_find(handle, NULL);
    if (!h)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!buf)
        return MPI_T_ERR_INVALID;
    const struct fy_env_var *v = &fy_env[h->index];
    long long num = 0;
    const char *str = NULL;
    if (fy_mpi_state == 1 && fy_proto_setting_writable(h->index) &&
        !fy_proto_setting_read(h->index, &num, &str)) {
        /* The value in force, written through MPI_T or not. */
        if (v->type == FY_ENV_STRING) {
            int len = h->count;
            put_string(str, buf, &len);
        } else if (v->type == FY_ENV_BOOL) {
            int b = num != 0;
            memcpy(buf, &b, sizeof(b));
        } else {
            memcpy(buf, &num, sizeof(num));
        }
        return MPI_SUCCESS;
    }
    switch (v->type) {
    case FY_ENV_BOOL: {
        int b = fy_env_int((enum fy_env_id)h->index) != 0;
        memcpy(buf, &b, sizeof(b));
        break;
    }
    case FY_ENV_INT:
    case FY_ENV_SIZE: {
        /* The value in force: the user's, else the tuning file's (once
         * MPI_Init has read it), else the default. */
        long long x = fy_tuned_value((enum fy_env_id)h->index, NULL);
        memcpy(buf, &x, sizeof(x));
        break;
    }
    case FY_ENV_STRING: {
        /* The buffer holds the count given at allocation; a value that
         * has grown since (MPI_Init read a new environment) is cut. */
        int len = h->count;
        put_string(cvar_string(h->index), buf, &len);
        break;
    }
    }
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_cvar_read)

/* Every setting is read once, at MPI_Init. Most are MPI_T_SCOPE_READONLY
 * and can never be set through MPI_T (set the environment variable); the
 * protocol choices (fy_proto_setting_writable) can, between MPI_Init and
 * MPI_Finalize, and apply to what is started after the write. */
FY_API int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    struct MPIR_T_cvar_handle_s *h = cvar_handle_find(handle, NULL);
    if (!h)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!fy_proto_setting_writable(h->index))
        return MPI_T_ERR_CVAR_SET_NEVER;
    if (fy_mpi_state != 1)
        return MPI_T_ERR_CVAR_SET_NOT_NOW;
    if (!buf)
        return MPI_T_ERR_INVALID;
    const struct fy_env_var *v = &fy_env[h->index];
    long long num = 0;
    char str[FY_CVAR_STR_MAX] = "";
    if (v->type == FY_ENV_STRING) {
        /* A C string: at most the handle's count with its NUL. */
        size_t n = strnlen(buf, sizeof(str));
        if (n == sizeof(str))
            return MPI_T_ERR_INVALID;
        memcpy(str, buf, n + 1);
    } else if (v->type == FY_ENV_BOOL) {
        int b;
        memcpy(&b, buf, sizeof(b));
        num = b;
    } else {
        memcpy(&num, buf, sizeof(num));
    }
    if (fy_proto_setting_write(h->index, num, str))
        return MPI_T_ERR_INVALID;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_cvar_write)

/* ---- performance variables: the protocol counters ----------------------- */

FY_API int PMPI_T_pvar_get_num(int *num_pvar)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    if (!num_pvar)
        return MPI_T_ERR_INVALID;
    const struct fy_pvar *t;
    *num_pvar = pvar_table(&t);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_pvar_get_num)

/* Counters are continuous (always counting: start/stop do not apply) and
 * not read-only: a handle can be reset, which only moves that handle's
 * origin. They cannot be written (MPI_T_ERR_PVAR_NO_WRITE). */
FY_API int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len,
                                int *verbosity, int *var_class,
                                MPI_Datatype *datatype, MPI_T_enum *enumtype,
                                char *desc, int *desc_len, int *bind,
                                int *readonly, int *continuous, int *atomic)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    const struct fy_pvar *t;
    int n = pvar_table(&t);
    if (pvar_index < 0 || pvar_index >= n)
        return MPI_T_ERR_INVALID_INDEX;
    put_string(t[pvar_index].name, name, name_len);
    put_string(t[pvar_index].desc, desc, desc_len);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_USER_BASIC;
    if (var_class)
        *var_class = MPI_T_PVAR_CLASS_COUNTER;
    if (datatype)
        *datatype = MPI_UNSIGNED_LONG_LONG;
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (readonly)
        *readonly = 0;
    if (continuous)
        *continuous = 1;
    if (atomic)
        *atomic = 0;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_pvar_get_info)

FY_API int PMPI_T_pvar_get_index(const char *name, int var_class,
                                 int *pvar_index)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    if (!name || !pvar_index)
        return MPI_T_ERR_INVALID;
    if (var_class != MPI_T_PVAR_CLASS_COUNTER)
        return MPI_T_ERR_INVALID_NAME; /* every variable is a counter */
    const struct fy_pvar *t;
    int n = pvar_table(&t);
    for (int i = 0; i < n; i++)
        if (!strcmp(t[i].name, name)) {
            *pvar_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}
FY_ALIAS(MPI_T_pvar_get_index)

FY_API int PMPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    if (!session)
        return MPI_T_ERR_INVALID;
    struct MPIR_T_pvar_session_s *s = calloc(1, sizeof(*s));
    if (!s)
        return MPI_T_ERR_OUT_OF_SESSIONS;
    s->next = s_sessions;
    s_sessions = s;
    *session = s;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_pvar_session_create)

/* The live session s, or NULL (with *prev_out the link that points at it). */
static struct MPIR_T_pvar_session_s *
session_find(MPI_T_pvar_session s, struct MPIR_T_pvar_session_s ***prev_out)
{
    for (struct MPIR_T_pvar_session_s **p = &s_sessions; *p; p = &(*p)->next)
        if (*p == s) {
            if (prev_out)
                *prev_out = p;
            return s;
        }
    return NULL;
}

FY_API int PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    struct MPIR_T_pvar_session_s **prev;
    if (!session || !session_find(*session, &prev))
        return MPI_T_ERR_INVALID_SESSION;
    *prev = (*session)->next;
    session_free(*session);
    *session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_pvar_session_free)

FY_API int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index,
                                    void *obj_handle, MPI_T_pvar_handle *handle,
                                    int *count)
{
    FY_MT_ENTER();
    (void)obj_handle; /* MPI_T_BIND_NO_OBJECT: ignored */
    CHECK_T_INIT();
    struct MPIR_T_pvar_session_s *s = session_find(session, NULL);
    if (!s)
        return MPI_T_ERR_INVALID_SESSION;
    const struct fy_pvar *t;
    if (pvar_index < 0 || pvar_index >= pvar_table(&t))
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    struct MPIR_T_pvar_handle_s *h = calloc(1, sizeof(*h));
    if (!h)
        return MPI_T_ERR_OUT_OF_HANDLES;
    /* A counter's starting value is 0 and it has counted since the
     * process started: a new handle reads the whole count. */
    h->index = pvar_index;
    h->base = 0;
    h->next = s->handles;
    s->handles = h;
    *handle = h;
    *count = 1;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_pvar_handle_alloc)

/* Resolve (session, handle): 0 and *s_out, *h_out (NULL for
 * MPI_T_PVAR_ALL_HANDLES when all_ok), or an MPI_T error code. */
static int pvar_resolve(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                        bool all_ok, struct MPIR_T_pvar_session_s **s_out,
                        struct MPIR_T_pvar_handle_s ***link_out)
{
    struct MPIR_T_pvar_session_s *s = session_find(session, NULL);
    if (!s)
        return MPI_T_ERR_INVALID_SESSION;
    *s_out = s;
    if (handle == MPI_T_PVAR_ALL_HANDLES) {
        if (!all_ok)
            return MPI_T_ERR_INVALID_HANDLE;
        *link_out = NULL;
        return MPI_SUCCESS;
    }
    for (struct MPIR_T_pvar_handle_s **p = &s->handles; *p; p = &(*p)->next)
        if (*p == handle) {
            *link_out = p;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_HANDLE; /* freed, or another session's */
}

static uint64_t pvar_live(const struct MPIR_T_pvar_handle_s *h)
{
    const struct fy_pvar *t;
    pvar_table(&t);
    return *t[h->index].value;
}

FY_API int PMPI_T_pvar_handle_free(MPI_T_pvar_session session,
                                   MPI_T_pvar_handle *handle)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    if (!handle)
        return MPI_T_ERR_INVALID_HANDLE;
    struct MPIR_T_pvar_session_s *s;
    struct MPIR_T_pvar_handle_s **link;
    int rc = pvar_resolve(session, *handle, false, &s, &link);
    if (rc)
        return rc;
    *link = (*handle)->next;
    free(*handle);
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_pvar_handle_free)

/* Every counter is continuous: starting or stopping one handle is
 * MPI_T_ERR_PVAR_NO_STARTSTOP; MPI_T_PVAR_ALL_HANDLES skips continuous
 * variables, so it succeeds with nothing to do. */
static int pvar_startstop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    CHECK_T_INIT();
    struct MPIR_T_pvar_session_s *s;
    struct MPIR_T_pvar_handle_s **link;
    int rc = pvar_resolve(session, handle, true, &s, &link);
    if (rc)
        return rc;
    return link ? MPI_T_ERR_PVAR_NO_STARTSTOP : MPI_SUCCESS;
}

FY_API int PMPI_T_pvar_start(MPI_T_pvar_session session,
                             MPI_T_pvar_handle handle)
{
    FY_MT_ENTER();
    return pvar_startstop(session, handle);
}
FY_ALIAS(MPI_T_pvar_start)

FY_API int PMPI_T_pvar_stop(MPI_T_pvar_session session,
                            MPI_T_pvar_handle handle)
{
    FY_MT_ENTER();
    return pvar_startstop(session, handle);
}
FY_ALIAS(MPI_T_pvar_stop)

FY_API int PMPI_T_pvar_read(MPI_T_pvar_session session,
                            MPI_T_pvar_handle handle, void *buf)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    struct MPIR_T_pvar_session_s *s;
    struct MPIR_T_pvar_handle_s **link;
    int rc = pvar_resolve(session, handle, false, &s, &link);
    if (rc)
        return rc;
    if (!buf)
        return MPI_T_ERR_INVALID;
    unsigned long long v = pvar_live(handle) - handle->base;
    memcpy(buf, &v, sizeof(v));
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_pvar_read)

FY_API int PMPI_T_pvar_write(MPI_T_pvar_session session,
                             MPI_T_pvar_handle handle, const void *buf)
{
    FY_MT_ENTER();
    (void)buf;
    CHECK_T_INIT();
    struct MPIR_T_pvar_session_s *s;
    struct MPIR_T_pvar_handle_s **link;
    int rc = pvar_resolve(session, handle, false, &s, &link);
    return rc ? rc : MPI_T_ERR_PVAR_NO_WRITE;
}
FY_ALIAS(MPI_T_pvar_write)

FY_API int PMPI_T_pvar_reset(MPI_T_pvar_session session,
                             MPI_T_pvar_handle handle)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    struct MPIR_T_pvar_session_s *s;
    struct MPIR_T_pvar_handle_s **link;
    int rc = pvar_resolve(session, handle, true, &s, &link);
    if (rc)
        return rc;
    if (link) {
        handle->base = pvar_live(handle);
        return MPI_SUCCESS;
    }
    for (struct MPIR_T_pvar_handle_s *h = s->handles; h; h = h->next)
        h->base = pvar_live(h);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_pvar_reset)

FY_API int PMPI_T_pvar_readreset(MPI_T_pvar_session session,
                                 MPI_T_pvar_handle handle, void *buf)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    struct MPIR_T_pvar_session_s *s;
    struct MPIR_T_pvar_handle_s **link;
    int rc = pvar_resolve(session, handle, false, &s, &link);
    if (rc)
        return rc;
    if (!buf)
        return MPI_T_ERR_INVALID;
    uint64_t now = pvar_live(handle);
    unsigned long long v = now - handle->base;
    memcpy(buf, &v, sizeof(v));
    handle->base = now;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_pvar_readreset)

/* ---- categories --------------------------------------------------------- */

FY_API int PMPI_T_category_get_num(int *num_cat)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    if (!num_cat)
        return MPI_T_ERR_INVALID;
    *num_cat = CAT_COUNT;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_category_get_num)

static int cat_ncvars(int cat)
{
    return cat == CAT_SETTINGS ? FY_ENV_COUNT : 0;
}

static int cat_npvars(int cat)
{
    const struct fy_pvar *t;
    return cat == CAT_PROTOCOLS ? pvar_table(&t) : 0;
}

FY_API int PMPI_T_category_get_info(int cat_index, char *name, int *name_len,
                                    char *desc, int *desc_len, int *num_cvars,
                                    int *num_pvars, int *num_categories)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    if (cat_index < 0 || cat_index >= CAT_COUNT)
        return MPI_T_ERR_INVALID_INDEX;
    put_string(cat_names[cat_index], name, name_len);
    put_string(cat_descs[cat_index], desc, desc_len);
    if (num_cvars)
        *num_cvars = cat_ncvars(cat_index);
    if (num_pvars)
        *num_pvars = cat_npvars(cat_index);
    if (num_categories)
        *num_categories = 0;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_category_get_info)

FY_API int PMPI_T_category_get_index(const char *name, int *cat_index)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    if (!name || !cat_index)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < CAT_COUNT; i++)
        if (!strcmp(cat_names[i], name)) {
            *cat_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}
FY_ALIAS(MPI_T_category_get_index)

/* The first 'len' of a category's n members, whose indices are 0..n-1
 * (each category holds the whole of one table). */
static int cat_list(int cat_index, int len, int indices[], int (*count)(int))
{
    CHECK_T_INIT();
    if (cat_index < 0 || cat_index >= CAT_COUNT)
        return MPI_T_ERR_INVALID_INDEX;
    if (len < 0 || (len > 0 && !indices))
        return MPI_T_ERR_INVALID;
    int n = count(cat_index);
    for (int i = 0; i < n && i < len; i++)
        indices[i] = i;
    return MPI_SUCCESS;
}

static int cat_none(int cat)
{
    (void)cat;
    return 0;
}

FY_API int PMPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    FY_MT_ENTER();
    return cat_list(cat_index, len, indices, cat_ncvars);
}
FY_ALIAS(MPI_T_category_get_cvars)

FY_API int PMPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    FY_MT_ENTER();
    return cat_list(cat_index, len, indices, cat_npvars);
}
FY_ALIAS(MPI_T_category_get_pvars)

FY_API int PMPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    FY_MT_ENTER();
    return cat_list(cat_index, len, indices, cat_none);
}
FY_ALIAS(MPI_T_category_get_categories)

FY_API int PMPI_T_category_get_num_events(int cat_index, int *num_events)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    if (cat_index < 0 || cat_index >= CAT_COUNT)
        return MPI_T_ERR_INVALID_INDEX;
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = 0;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_category_get_num_events)

FY_API int PMPI_T_category_get_events(int cat_index, int len, int indices[])
{
    FY_MT_ENTER();
    return cat_list(cat_index, len, indices, cat_none);
}
FY_ALIAS(MPI_T_category_get_events)

/* The variables and categories are fixed for the life of the process. */
FY_API int PMPI_T_category_changed(int *update_number)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    if (!update_number)
        return MPI_T_ERR_INVALID;
    *update_number = 0;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_category_changed)

/* ---- events (MPI 4.0): no sources and no event types -------------------- */

FY_API int PMPI_T_source_get_num(int *num_sources)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    if (!num_sources)
        return MPI_T_ERR_INVALID;
    *num_sources = 0;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_source_get_num)

FY_API int PMPI_T_source_get_info(int source_index, char *name, int *name_len,
                                  char *desc, int *desc_len,
                                  MPI_T_source_order *ordering,
                                  MPI_Count *ticks_per_second,
                                  MPI_Count *max_ticks, MPI_Info *info)
{
    FY_MT_ENTER();
    (void)source_index;
    (void)name;
    (void)name_len;
    (void)desc;
    (void)desc_len;
    (void)ordering;
    (void)ticks_per_second;
    (void)max_ticks;
    (void)info;
    CHECK_T_INIT();
    return MPI_T_ERR_INVALID_INDEX;
}
FY_ALIAS(MPI_T_source_get_info)

FY_API int PMPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    FY_MT_ENTER();
    (void)source_index;
    (void)timestamp;
    CHECK_T_INIT();
    return MPI_T_ERR_INVALID_INDEX;
}
FY_ALIAS(MPI_T_source_get_timestamp)

FY_API int PMPI_T_event_get_num(int *num_events)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = 0;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_T_event_get_num)

FY_API int PMPI_T_event_get_info(int event_index, char *name, int *name_len,
                                 int *verbosity,
                                 MPI_Datatype array_of_datatypes[],
                                 MPI_Aint array_of_displacements[],
                                 int *num_elements, MPI_T_enum *enumtype,
                                 MPI_Info *info, char *desc, int *desc_len,
                                 int *bind)
{
    FY_MT_ENTER();
    (void)event_index;
    (void)name;
    (void)name_len;
    (void)verbosity;
    (void)array_of_datatypes;
    (void)array_of_displacements;
    (void)num_elements;
    (void)enumtype;
    (void)info;
    (void)desc;
    (void)desc_len;
    (void)bind;
    CHECK_T_INIT();
    return MPI_T_ERR_INVALID_INDEX;
}
FY_ALIAS(MPI_T_event_get_info)

FY_API int PMPI_T_event_get_index(const char *name, int *event_index)
{
    FY_MT_ENTER();
    CHECK_T_INIT();
    if (!name || !event_index)
        return MPI_T_ERR_INVALID;
    return MPI_T_ERR_INVALID_NAME;
}
FY_ALIAS(MPI_T_event_get_index)

FY_API int
PMPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                          MPI_T_event_registration *event_registration)
{
    FY_MT_ENTER();
    (void)event_index;
    (void)obj_handle;
    (void)info;
    (void)event_registration;
    CHECK_T_INIT();
    return MPI_T_ERR_INVALID_INDEX;
}
FY_ALIAS(MPI_T_event_handle_alloc)

/* No registration or instance can exist: every call naming one is given
 * an invalid handle. */
#define NO_EVENT_HANDLE()                                                      \
    do {                                                                       \
        CHECK_T_INIT();                                                        \
        return MPI_T_ERR_INVALID_HANDLE;                                       \
    } while (0)

FY_API int PMPI_T_event_handle_set_info(MPI_T_event_registration reg,
                                        MPI_Info info)
{
    FY_MT_ENTER();
    (void)reg;
    (void)info;
    NO_EVENT_HANDLE();
}
FY_ALIAS(MPI_T_event_handle_set_info)

FY_API int PMPI_T_event_handle_get_info(MPI_T_event_registration reg,
                                        MPI_Info *info_used)
{
    FY_MT_ENTER();
    (void)reg;
    (void)info_used;
    NO_EVENT_HANDLE();
}
FY_ALIAS(MPI_T_event_handle_get_info)

FY_API int PMPI_T_event_register_callback(MPI_T_event_registration reg,
                                          MPI_T_cb_safety cb_safety,
                                          MPI_Info info, void *user_data,
                                          MPI_T_event_cb_function cb)
{
    FY_MT_ENTER();
    (void)reg;
    (void)cb_safety;
    (void)info;
    (void)user_data;
    (void)cb;
    NO_EVENT_HANDLE();
}
FY_ALIAS(MPI_T_event_register_callback)

FY_API int PMPI_T_event_callback_set_info(MPI_T_event_registration reg,
                                          MPI_T_cb_safety cb_safety,
                                          MPI_Info info)
{
    FY_MT_ENTER();
    (void)reg;
    (void)cb_safety;
    (void)info;
    NO_EVENT_HANDLE();
}
FY_ALIAS(MPI_T_event_callback_set_info)

FY_API int PMPI_T_event_callback_get_info(MPI_T_event_registration reg,
                                          MPI_T_cb_safety cb_safety,
                                          MPI_Info *info_used)
{
    FY_MT_ENTER();
    (void)reg;
    (void)cb_safety;
    (void)info_used;
    NO_EVENT_HANDLE();
}
FY_ALIAS(MPI_T_event_callback_get_info)

FY_API int PMPI_T_event_handle_free(MPI_T_event_registration reg,
                                    void *user_data,
                                    MPI_T_event_free_cb_function free_cb)
{
    FY_MT_ENTER();
    (void)reg;
    (void)user_data;
    (void)free_cb;
    NO_EVENT_HANDLE();
}
FY_ALIAS(MPI_T_event_handle_free)

FY_API int PMPI_T_event_set_dropped_handler(MPI_T_event_registration reg,
                                            MPI_T_event_dropped_cb_function cb)
{
    FY_MT_ENTER();
    (void)reg;
    (void)cb;
    NO_EVENT_HANDLE();
}
FY_ALIAS(MPI_T_event_set_dropped_handler)

FY_API int PMPI_T_event_read(MPI_T_event_instance inst, int element_index,
                             void *buffer)
{
    FY_MT_ENTER();
    (void)inst;
    (void)element_index;
    (void)buffer;
    NO_EVENT_HANDLE();
}
FY_ALIAS(MPI_T_event_read)

FY_API int PMPI_T_event_copy(MPI_T_event_instance inst, void *buffer)
{
    FY_MT_ENTER();
    (void)inst;
    (void)buffer;
    NO_EVENT_HANDLE();
}
FY_ALIAS(MPI_T_event_copy)

FY_API int PMPI_T_event_get_timestamp(MPI_T_event_instance inst,
                                      MPI_Count *event_timestamp)
{
    FY_MT_ENTER();
    (void)inst;
    (void)event_timestamp;
    NO_EVENT_HANDLE();
}
FY_ALIAS(MPI_T_event_get_timestamp)

FY_API int PMPI_T_event_get_source(MPI_T_event_instance inst, int *source_index)
{
    FY_MT_ENTER();
    (void)inst;
    (void)source_index;
    NO_EVENT_HANDLE();
}
FY_ALIAS(MPI_T_event_get_source)
