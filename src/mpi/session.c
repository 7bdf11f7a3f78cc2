/* SPDX-License-Identifier: MIT */
/* MPI 4.0 sessions (chapter 11.3): MPI_Session_init/finalize, the process
 * sets "mpi://WORLD" and "mpi://SELF", groups from them, and communicators
 * made from groups alone (MPI_Comm_create_from_group,
 * MPI_Intercomm_create_from_groups).
 *
 * A session brings up the same library core MPI_Init does (init.c keeps
 * the count of who holds it: the world model and each open session). The
 * core outlives a session: MPI_Session_finalize frees the session only,
 * so a program may open and close sessions repeatedly; the core goes down
 * at MPI_Finalize when no session is open, or when the process exits
 * after its last session (init.c's exit hook, which waits for the other
 * ranks of the node as MPI_Finalize does).
 *
 * Communicators from groups agree on their context id among the group's
 * members only, on MPI_COMM_WORLD's collective context with sequence
 * numbers from the upper half of the space chosen by a hash of the
 * string tag (as MPI_Comm_create_group does with its integer tag): the
 * standard asks concurrent creations to use distinct tags; two distinct
 * tags that hash alike are told apart by nothing, so that case is
 * documented rather than detected. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "mpi/mpi_impl.h"
#include "util/handle.h"

struct fy_session {
    MPI_Session handle;
    MPI_Errhandler errhandler; /* a reference held */
    int thread_level;          /* what the session provides */
};

static struct fy_handle_table s_sessions = FY_HANDLE_TABLE_INIT(FY_HT_SESSION);

static struct fy_session *session_get(MPI_Session h)
{
    return fy_handle_get(&s_sessions, h);
}

#define SERR(s, cls, fn, ...)                                                  \
    fy_mpi_err_obj((s)->errhandler, (s)->handle, cls, fn, __VA_ARGS__)

#define SCHECK(cond, s, cls, fn, ...)                                          \
    do {                                                                       \
        if (FY_UNLIKELY(!(cond)))                                              \
            return SERR(s, cls, fn, __VA_ARGS__);                              \
    } while (0)

/* Resolve a session handle or report MPI_ERR_SESSION: there is no session
 * to ask for a handler, so the error goes where other errors without an
 * object go (MPI_COMM_WORLD's handler; MPI_ERRORS_ARE_FATAL before the
 * core is up), as for an invalid window or communicator. */
#define GET_SESSION(var, h, fn)                                                \
    struct fy_session *var = session_get(h);                                   \
    if (FY_UNLIKELY(!var))                                                     \
        return fy_mpi_err(NULL, MPI_ERR_SESSION, fn, "invalid session 0x%x",   \
                          (unsigned)(h));

/* The process sets Ferry knows, in the order MPI_Session_get_nth_pset
 * lists them. Names compare case-insensitively in their "mpi://" prefix
 * and exactly in the rest, as the standard's examples spell them. */
static const char *const s_psets[] = {"mpi://WORLD", "mpi://SELF"};
enum { PSET_WORLD, PSET_SELF, NPSETS };

static int pset_find(const char *name)
{
    if (!name || strncasecmp(name, "mpi://", 6) != 0)
        return -1;
    for (int i = 0; i < NPSETS; i++)
        if (strcasecmp(name + 6, s_psets[i] + 6) == 0)
            return i;
    return -1;
}

/* The thread level asked for in an info's "thread_level" (MPI 4.0 11.3.1:
 * the names of the constants), -1 when absent, -2 when it names none of
 * them (*value is then the value). */
static int info_thread_level(MPI_Info info, const char **value)
{
    if (info == MPI_INFO_NULL)
        return -1;
    struct fy_info *in = fy_info_get(info);
    const char *v = in ? fy_info_lookup(in, "thread_level") : NULL;
    static const char *const names[] = {
        "MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
        "MPI_THREAD_MULTIPLE"};
    if (!v)
        return -1;
    for (int i = 0; i < (int)FY_ARRAY_LEN(names); i++)
        if (strcasecmp(v, names[i]) == 0)
            return i;
    *value = v;
    return -2;
}

static const char *thread_level_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE:
        return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
        return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
        return "MPI_THREAD_SERIALIZED";
    default:
        return "MPI_THREAD_MULTIPLE";
    }
}

FY_API int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler,
                             MPI_Session *session)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    struct fy_errhandler *eh = fy_errhandler_get(errhandler);
    if (!session)
        return fy_mpi_err(NULL, MPI_ERR_ARG, fn, "session is NULL");
    *session = MPI_SESSION_NULL;
    if (!eh)
        return fy_mpi_err(NULL, MPI_ERR_ARG, fn, "invalid error handler 0x%x",
                          (unsigned)errhandler);
    if (info != MPI_INFO_NULL && !fy_info_get(info))
        return fy_mpi_err_obj(errhandler, MPI_SESSION_NULL, MPI_ERR_INFO, fn,
                              "invalid info 0x%x", (unsigned)info);
    const char *bad = NULL;
    int want = info_thread_level(info, &bad);
    if (want == -2)
        return fy_mpi_err_obj(errhandler, MPI_SESSION_NULL, MPI_ERR_INFO_VALUE,
                              fn,
                              "info key thread_level is \"%s\", not one of "
                              "MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, "
                              "MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE",
                              bad);
    int cls = fy_mpi_core_hold(fn);
    if (cls)
        return fy_mpi_err_obj(errhandler, MPI_SESSION_NULL, cls, fn,
                              "the library cannot be brought up again once "
                              "MPI_Finalize has taken it down");
    struct fy_session *s = calloc(1, sizeof(*s));
    if (!s || fy_handle_alloc(&s_sessions, s, &s->handle) != 0) {
        free(s);
        fy_mpi_core_release();
        return fy_mpi_err_obj(errhandler, MPI_SESSION_NULL, MPI_ERR_NO_MEM, fn,
                              "out of memory for a session");
    }
    fy_errhandler_retain(eh);
    s->errhandler = errhandler;
    int most = fy_mpi_thread_level_max();
    /* No thread_level asked: MPI_THREAD_SINGLE, the default of MPI_Init;
     * but once the process runs MPI_THREAD_MULTIPLE (the world model or
     * another session asked for it) every session has it, as MPI allows a
     * higher level than asked: threads of the program may already be in
     * MPI at once, and a session reporting less would be wrong. */
    s->thread_level = want < 0 ? MPI_THREAD_SINGLE : want > most ? most : want;
    if (fy_mt_on)
        s->thread_level = MPI_THREAD_MULTIPLE;
    fy_mpi_thread_level_use(s->thread_level);
    *session = s->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Session_init)

FY_API int PMPI_Session_finalize(MPI_Session *session)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    if (!session)
        return fy_mpi_err(NULL, MPI_ERR_ARG, fn, "session is NULL");
    GET_SESSION(s, *session, fn);
    fy_handle_release(&s_sessions, s->handle);
    struct fy_errhandler *eh = fy_errhandler_get(s->errhandler);
    if (eh)
        fy_errhandler_release(eh);
    free(s);
    *session = MPI_SESSION_NULL;
    fy_mpi_core_release();
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Session_finalize)

FY_API int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info,
                                      int *npset_names)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    GET_SESSION(s, session, fn);
    SCHECK(info == MPI_INFO_NULL || fy_info_get(info), s, MPI_ERR_INFO, fn,
           "invalid info 0x%x", (unsigned)info);
    SCHECK(npset_names, s, MPI_ERR_ARG, fn, "npset_names is NULL");
    *npset_names = NPSETS;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Session_get_num_psets)

FY_API int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n,
                                     int *pset_len, char *pset_name)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    GET_SESSION(s, session, fn);
    SCHECK(info == MPI_INFO_NULL || fy_info_get(info), s, MPI_ERR_INFO, fn,
           "invalid info 0x%x", (unsigned)info);
    SCHECK(n >= 0 && n < NPSETS, s, MPI_ERR_ARG, fn, "n = %d is not in [0, %d)",
           n, NPSETS);
    SCHECK(pset_len, s, MPI_ERR_ARG, fn, "pset_len is NULL");
    int need = (int)strlen(s_psets[n]) + 1;
    /* *pset_len == 0 asks for the length (NUL included); otherwise copy at
     * most *pset_len - 1 characters and a NUL (MPI 4.0 11.3.2). */
    if (*pset_len == 0) {
        *pset_len = need;
        return MPI_SUCCESS;
    }
    SCHECK(*pset_len > 0, s, MPI_ERR_ARG, fn, "*pset_len %d is negative",
           *pset_len);
    SCHECK(pset_name, s, MPI_ERR_ARG, fn, "pset_name is NULL");
    snprintf(pset_name, (size_t)*pset_len, "%s", s_psets[n]);
    *pset_len = need;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Session_get_nth_pset)

FY_API int PMPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    GET_SESSION(s, session, fn);
    SCHECK(info_used, s, MPI_ERR_ARG, fn, "info_used is NULL");
    struct fy_info *in;
    SCHECK(fy_info_new(&in) == 0, s, MPI_ERR_NO_MEM, fn,
           "out of memory for an info object");
    if (fy_info_put(in, "thread_level", thread_level_name(s->thread_level))) {
        fy_info_free(in);
        return SERR(s, MPI_ERR_NO_MEM, fn, "out of memory for an info object");
    }
    *info_used = fy_info_handle(in);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Session_get_info)

/* The group of process set k (a new reference). */
static struct fy_group *pset_group(int k)
{
    MPI_Comm c = k == PSET_WORLD ? MPI_COMM_WORLD : MPI_COMM_SELF;
    struct fy_group *g = fy_comm_get(c)->group;
    fy_group_retain(g);
    return g;
}

FY_API int PMPI_Session_get_pset_info(MPI_Session session,
                                      const char *pset_name, MPI_Info *info)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    GET_SESSION(s, session, fn);
    SCHECK(info, s, MPI_ERR_ARG, fn, "info is NULL");
    int k = pset_find(pset_name);
    SCHECK(k >= 0, s, MPI_ERR_ARG, fn,
           "\"%s\" is not a process set (Ferry has mpi://WORLD and "
           "mpi://SELF)",
           pset_name ? pset_name : "(null)");
    struct fy_group *g = pset_group(k);
    char size[16];
    snprintf(size, sizeof(size), "%d", g->size);
    fy_group_release(g);
    struct fy_info *in;
    SCHECK(fy_info_new(&in) == 0, s, MPI_ERR_NO_MEM, fn,
           "out of memory for an info object");
    if (fy_info_put(in, "mpi_size", size)) {
        fy_info_free(in);
        return SERR(s, MPI_ERR_NO_MEM, fn, "out of memory for an info object");
    }
    *info = fy_info_handle(in);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Session_get_pset_info)

FY_API int PMPI_Group_from_session_pset(MPI_Session session,
                                        const char *pset_name,
                                        MPI_Group *newgroup)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    GET_SESSION(s, session, fn);
    SCHECK(newgroup, s, MPI_ERR_ARG, fn, "newgroup is NULL");
    int k = pset_find(pset_name);
    SCHECK(k >= 0, s, MPI_ERR_ARG, fn,
           "\"%s\" is not a process set (Ferry has mpi://WORLD and "
           "mpi://SELF)",
           pset_name ? pset_name : "(null)");
    *newgroup = pset_group(k)->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Group_from_session_pset)

/* ---- error handlers ----------------------------------------------------- */

FY_API int
PMPI_Session_create_errhandler(MPI_Session_errhandler_function *function,
                               MPI_Errhandler *errhandler)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    /* Callable before any session exists (MPI 4.0 9.3.4), so no core
     * check: error handlers need nothing of it. */
    if (!function || !errhandler)
        return fy_mpi_err(NULL, MPI_ERR_ARG, fn, "%s is NULL",
                          function ? "errhandler" : "function");
    struct fy_errhandler *eh;
    /* MPI_Session is an int handle like MPI_Comm: the handler types agree. */
    if (fy_errhandler_create((MPI_Comm_errhandler_function *)(void *)function,
                             &eh) != 0)
        return fy_mpi_err(NULL, MPI_ERR_NO_MEM, fn,
                          "out of memory for an error handler");
    *errhandler = eh->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Session_create_errhandler)

FY_API int PMPI_Session_set_errhandler(MPI_Session session,
                                       MPI_Errhandler errhandler)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    GET_SESSION(s, session, fn);
    struct fy_errhandler *eh = fy_errhandler_get(errhandler);
    SCHECK(eh, s, MPI_ERR_ARG, fn, "invalid error handler 0x%x",
           (unsigned)errhandler);
    fy_errhandler_retain(eh);
    struct fy_errhandler *old = fy_errhandler_get(s->errhandler);
    if (old)
        fy_errhandler_release(old);
    s->errhandler = errhandler;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Session_set_errhandler)

FY_API int PMPI_Session_get_errhandler(MPI_Session session,
                                       MPI_Errhandler *errhandler)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    GET_SESSION(s, session, fn);
    SCHECK(errhandler, s, MPI_ERR_ARG, fn, "errhandler is NULL");
    struct fy_errhandler *eh = fy_errhandler_get(s->errhandler);
    if (eh)
        fy_errhandler_retain(eh);
    *errhandler = s->errhandler;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Session_get_errhandler)

FY_API int PMPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    GET_SESSION(s, session, fn);
    struct fy_errhandler *eh = fy_errhandler_get(s->errhandler);
    if (eh && eh->handle == MPI_ERRORS_RETURN)
        return MPI_SUCCESS;
    SERR(s, errorcode, fn, "called with error code %d", errorcode);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Session_call_errhandler)

/* ---- communicators from groups ------------------------------------------ */

/* FNV-1a of the string tag, folded to the 21 bits a creation's sequence
 * numbers may use (comm.c). */
static uint32_t stringtag_hash(const char *tag)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)tag; *p; p++)
        h = (h ^ *p) * 16777619u;
    return (h ^ (h >> 21)) & 0x1fffffu;
}

/* The checks both calls share: a group, a string tag, an info and an error
 * handler. Errors go to 'errhandler' when it is valid (MPI 4.0 11.3.3:
 * "the error handler is attached to the new communicator ... and invoked
 * for errors in this call"), else to the default. */
/* The checks MPI_Comm_create_from_group and
 * MPI_Intercomm_create_from_groups share. With empty_ok, MPI_GROUP_EMPTY
 * passes with *g_out NULL (the caller then returns MPI_COMM_NULL). */
static int from_group_check(const char *fn, MPI_Group group,
                            const char *stringtag, MPI_Info info,
                            MPI_Errhandler errhandler, void *out, bool empty_ok,
                            struct fy_group **g_out)
{
    FY_CHECK_INIT(fn);
    MPI_Errhandler eh = errhandler;
    if (!fy_errhandler_get(errhandler))
        return fy_mpi_err(NULL, MPI_ERR_ARG, fn, "invalid error handler 0x%x",
                          (unsigned)errhandler);
    if (!out)
        return fy_mpi_err_obj(eh, MPI_COMM_NULL, MPI_ERR_ARG, fn,
                              "the output communicator pointer is NULL");
    struct fy_group *g = fy_group_get(group);
    bool empty = group == MPI_GROUP_EMPTY || (g && g->size == 0);
    if (!g || (empty && !empty_ok))
        return fy_mpi_err_obj(eh, MPI_COMM_NULL, MPI_ERR_GROUP, fn,
                              "invalid group 0x%x", (unsigned)group);
    if (!stringtag || strlen(stringtag) >= MPI_MAX_STRINGTAG_LEN)
        return fy_mpi_err_obj(eh, MPI_COMM_NULL, MPI_ERR_ARG, fn,
                              "stringtag is NULL or longer than "
                              "MPI_MAX_STRINGTAG_LEN - 1");
    if (info != MPI_INFO_NULL && !fy_info_get(info))
        return fy_mpi_err_obj(eh, MPI_COMM_NULL, MPI_ERR_INFO, fn,
                              "invalid info 0x%x", (unsigned)info);
    if (!empty && g->rank == MPI_UNDEFINED)
        return fy_mpi_err_obj(eh, MPI_COMM_NULL, MPI_ERR_GROUP, fn,
                              "this process is not a member of the group");
    *g_out = empty ? NULL : g;
    return 0;
}

static int from_group_fail(const char *fn, MPI_Errhandler eh, int rc)
{
    if (rc == -ENOSPC)
        return fy_mpi_err_obj(eh, MPI_COMM_NULL, MPI_ERR_OTHER, fn,
                              "too many communicators: all %u context ids in "
                              "use (free some with MPI_Comm_free)",
                              FY_CTX_MAX / 2u);
    if (rc == -ERANGE)
        return fy_mpi_err_obj(eh, MPI_COMM_NULL, MPI_ERR_RANK, fn,
                              "remote_leader is not a rank of remote_group");
    if (rc == -EXDEV)
        return fy_mpi_err_obj(eh, MPI_COMM_NULL, MPI_ERR_GROUP, fn,
                              "the local and remote groups overlap");
    return fy_mpi_err_obj(eh, MPI_COMM_NULL, fy_errno_to_class(rc), fn, "%s",
                          strerror(-rc));
}

/* The communicator of group g (this process a member) with the tag's
 * sequence numbers, its handler set to eh. */
static int comm_of_group(struct fy_group *g, const char *stringtag,
                         MPI_Errhandler eh, struct fy_comm **out)
{
    struct fy_comm *world = fy_comm_get(MPI_COMM_WORLD);
    struct fy_comm *nc;
    int rc =
        fy_comm_create_group(world, g, (int)stringtag_hash(stringtag), &nc);
    if (rc != 0)
        return rc;
    fy_comm_set_errhandler(nc, fy_errhandler_get(eh));
    *out = nc;
    return 0;
}

FY_API int PMPI_Comm_create_from_group(MPI_Group group, const char *stringtag,
                                       MPI_Info info, MPI_Errhandler errhandler,
                                       MPI_Comm *newcomm)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    struct fy_group *g;
    int cls = from_group_check(fn, group, stringtag, info, errhandler, newcomm,
                               true, &g);
    if (cls)
        return cls;
    *newcomm = MPI_COMM_NULL;
    /* MPI 4.0 7.4.2: with MPI_GROUP_EMPTY the call is local and returns
     * MPI_COMM_NULL (MPICH's session/session_mod_group). */
    if (!g)
        return MPI_SUCCESS;
    struct fy_comm *nc;
    int rc = comm_of_group(g, stringtag, errhandler, &nc);
    if (rc != 0)
        return from_group_fail(fn, errhandler, rc);
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Comm_create_from_group)

FY_API int PMPI_Intercomm_create_from_groups(
    MPI_Group local_group, int local_leader, MPI_Group remote_group,
    int remote_leader, const char *stringtag, MPI_Info info,
    MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    struct fy_group *lg;
    int cls = from_group_check(fn, local_group, stringtag, info, errhandler,
                               newintercomm, false, &lg);
    if (cls)
        return cls;
    *newintercomm = MPI_COMM_NULL;
    struct fy_group *rg = fy_group_get(remote_group);
    if (!rg || remote_group == MPI_GROUP_EMPTY)
        return fy_mpi_err_obj(errhandler, MPI_COMM_NULL, MPI_ERR_GROUP, fn,
                              "invalid remote_group 0x%x",
                              (unsigned)remote_group);
    if (local_leader < 0 || local_leader >= lg->size)
        return fy_mpi_err_obj(errhandler, MPI_COMM_NULL, MPI_ERR_RANK, fn,
                              "local_leader %d is not a rank of local_group "
                              "(size %d)",
                              local_leader, lg->size);
    if (remote_leader < 0 || remote_leader >= rg->size)
        return fy_mpi_err_obj(errhandler, MPI_COMM_NULL, MPI_ERR_RANK, fn,
                              "remote_leader %d is not a rank of remote_group "
                              "(size %d)",
                              remote_leader, rg->size);
    struct fy_comm *local;
    int rc = comm_of_group(lg, stringtag, errhandler, &local);
    if (rc != 0)
        return from_group_fail(fn, errhandler, rc);
    /* The leaders meet on MPI_COMM_WORLD's ranks but on the bridge
     * context's point-to-point half, which no user receive can name (an
     * MPI_ANY_TAG receive on MPI_COMM_WORLD would otherwise take their
     * messages); the agreement itself uses the bridge's collective half. */
    struct fy_comm peer = *fy_comm_get(MPI_COMM_WORLD);
    peer.ctx = FY_CTX_BRIDGE;
    peer.attrs = NULL;
    struct fy_comm *nc = NULL;
    rc = fy_intercomm_create(local, local_leader, &peer,
                             rg->world[remote_leader],
                             (int)stringtag_hash(stringtag), &nc);
    (void)fy_comm_free(local); /* the intercommunicator made its own */
    if (rc != 0)
        return from_group_fail(fn, errhandler, rc);
    fy_comm_set_errhandler(nc, fy_errhandler_get(errhandler));
    *newintercomm = nc->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Intercomm_create_from_groups)
