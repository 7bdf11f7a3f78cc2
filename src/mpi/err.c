/* SPDX-License-Identifier: MIT */
/* Error reporting: the one place internal errors become MPI error classes
 * (fy_errno_to_class), the dispatch to a communicator's error handler
 * (fy_mpi_err), the error handler entry points, and MPI_Error_string /
 * MPI_Error_class. Ferry returns error classes as error codes; the
 * detailed message of an error (call and argument) is printed by the fatal
 * handlers, while MPI_Error_string depends on the code alone. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi/mpi_impl.h"

struct fy_errclass_info {
    const char *name;
    const char *text;
};

static const struct fy_errclass_info s_classes[] = {
    [MPI_SUCCESS] = {"MPI_SUCCESS", "No MPI error"},
    [MPI_ERR_BUFFER] = {"MPI_ERR_BUFFER", "Invalid buffer pointer"},
    [MPI_ERR_COUNT] = {"MPI_ERR_COUNT", "Invalid count argument"},
    [MPI_ERR_TYPE] = {"MPI_ERR_TYPE", "Invalid datatype argument"},
    [MPI_ERR_TAG] = {"MPI_ERR_TAG", "Invalid tag argument"},
    [MPI_ERR_COMM] = {"MPI_ERR_COMM", "Invalid communicator"},
    [MPI_ERR_RANK] = {"MPI_ERR_RANK", "Invalid rank"},
    [MPI_ERR_ROOT] = {"MPI_ERR_ROOT", "Invalid root"},
    [MPI_ERR_GROUP] = {"MPI_ERR_GROUP", "Invalid group"},
    [MPI_ERR_OP] = {"MPI_ERR_OP", "Invalid reduction operation"},
    [MPI_ERR_TOPOLOGY] = {"MPI_ERR_TOPOLOGY", "Invalid topology"},
    [MPI_ERR_DIMS] = {"MPI_ERR_DIMS", "Invalid dimension argument"},
    [MPI_ERR_ARG] = {"MPI_ERR_ARG", "Invalid argument"},
    [MPI_ERR_UNKNOWN] = {"MPI_ERR_UNKNOWN", "Unknown error"},
    [MPI_ERR_TRUNCATE] = {"MPI_ERR_TRUNCATE",
                          "Message truncated: larger than the receive buffer"},
    [MPI_ERR_OTHER] = {"MPI_ERR_OTHER", "Other error"},
    [MPI_ERR_INTERN] = {"MPI_ERR_INTERN", "Internal error in the MPI library"},
    [MPI_ERR_IN_STATUS] = {"MPI_ERR_IN_STATUS",
                           "Error code is in the status array"},
    [MPI_ERR_PENDING] = {"MPI_ERR_PENDING", "Request still pending"},
    [MPI_ERR_REQUEST] = {"MPI_ERR_REQUEST", "Invalid request"},
    [MPI_ERR_ACCESS] = {"MPI_ERR_ACCESS", "Permission denied"},
    [MPI_ERR_AMODE] = {"MPI_ERR_AMODE", "Invalid file access mode"},
    [MPI_ERR_BAD_FILE] = {"MPI_ERR_BAD_FILE", "Invalid file name"},
    [MPI_ERR_CONVERSION] = {"MPI_ERR_CONVERSION",
                            "Error in a data conversion function"},
    [MPI_ERR_DUP_DATAREP] = {"MPI_ERR_DUP_DATAREP",
                             "Data representation already registered"},
    [MPI_ERR_FILE_EXISTS] = {"MPI_ERR_FILE_EXISTS", "File exists"},
    [MPI_ERR_FILE_IN_USE] = {"MPI_ERR_FILE_IN_USE", "File in use"},
    [MPI_ERR_FILE] = {"MPI_ERR_FILE", "Invalid file handle"},
    [MPI_ERR_INFO] = {"MPI_ERR_INFO", "Invalid info object"},
    [MPI_ERR_INFO_KEY] = {"MPI_ERR_INFO_KEY", "Info key too long"},
    [MPI_ERR_INFO_VALUE] = {"MPI_ERR_INFO_VALUE", "Info value too long"},
    [MPI_ERR_INFO_NOKEY] = {"MPI_ERR_INFO_NOKEY", "Info key not defined"},
    [MPI_ERR_IO] = {"MPI_ERR_IO", "I/O error"},
    [MPI_ERR_NAME] = {"MPI_ERR_NAME", "Service name not published"},
    [MPI_ERR_NO_MEM] = {"MPI_ERR_NO_MEM", "Out of memory"},
    [MPI_ERR_NOT_SAME] = {"MPI_ERR_NOT_SAME",
                          "Collective arguments differ between processes"},
    [MPI_ERR_NO_SPACE] = {"MPI_ERR_NO_SPACE", "No space left"},
    [MPI_ERR_NO_SUCH_FILE] = {"MPI_ERR_NO_SUCH_FILE", "No such file"},
    [MPI_ERR_PORT] = {"MPI_ERR_PORT", "Invalid port name"},
    [MPI_ERR_QUOTA] = {"MPI_ERR_QUOTA", "Quota exceeded"},
    [MPI_ERR_READ_ONLY] = {"MPI_ERR_READ_ONLY", "Read-only file"},
    [MPI_ERR_SERVICE] = {"MPI_ERR_SERVICE", "Service not published"},
    [MPI_ERR_SPAWN] = {"MPI_ERR_SPAWN", "Could not spawn processes"},
    [MPI_ERR_UNSUPPORTED_DATAREP] = {"MPI_ERR_UNSUPPORTED_DATAREP",
                                     "Unsupported data representation"},
    [MPI_ERR_UNSUPPORTED_OPERATION] = {"MPI_ERR_UNSUPPORTED_OPERATION",
                                       "Operation not supported"},
    [MPI_ERR_WIN] = {"MPI_ERR_WIN", "Invalid window"},
    [MPI_ERR_BASE] = {"MPI_ERR_BASE", "Invalid base address"},
    [MPI_ERR_LOCKTYPE] = {"MPI_ERR_LOCKTYPE", "Invalid lock type"},
    [MPI_ERR_KEYVAL] = {"MPI_ERR_KEYVAL", "Invalid attribute key"},
    [MPI_ERR_RMA_CONFLICT] = {"MPI_ERR_RMA_CONFLICT",
                              "Conflicting accesses to a window"},
    [MPI_ERR_RMA_SYNC] = {"MPI_ERR_RMA_SYNC",
                          "Wrong synchronization of RMA calls"},
    [MPI_ERR_SIZE] = {"MPI_ERR_SIZE", "Invalid size argument"},
    [MPI_ERR_DISP] = {"MPI_ERR_DISP", "Invalid displacement argument"},
    [MPI_ERR_ASSERT] = {"MPI_ERR_ASSERT", "Invalid assert argument"},
    [54] = {NULL, NULL},
    [MPI_ERR_RMA_RANGE] = {"MPI_ERR_RMA_RANGE",
                           "Target memory outside the window"},
    [MPI_ERR_RMA_ATTACH] = {"MPI_ERR_RMA_ATTACH",
                            "Memory cannot be attached to the window"},
    [MPI_ERR_RMA_SHARED] = {"MPI_ERR_RMA_SHARED",
                            "Memory cannot be shared through the window"},
    [MPI_ERR_RMA_FLAVOR] = {"MPI_ERR_RMA_FLAVOR",
                            "Wrong window flavor for this call"},
    [MPI_T_ERR_MEMORY] = {"MPI_T_ERR_MEMORY", "MPI_T: out of memory"},
    [MPI_T_ERR_NOT_INITIALIZED] = {"MPI_T_ERR_NOT_INITIALIZED",
                                   "MPI_T: interface not initialized"},
    [MPI_T_ERR_CANNOT_INIT] = {"MPI_T_ERR_CANNOT_INIT",
                               "MPI_T: interface cannot be initialized now"},
    [MPI_T_ERR_INVALID_INDEX] = {"MPI_T_ERR_INVALID_INDEX",
                                 "MPI_T: invalid index"},
    [MPI_T_ERR_INVALID_ITEM] = {"MPI_T_ERR_INVALID_ITEM",
                                "MPI_T: invalid item index"},
    [MPI_T_ERR_INVALID_HANDLE] = {"MPI_T_ERR_INVALID_HANDLE",
                                  "MPI_T: invalid handle"},
    [MPI_T_ERR_OUT_OF_HANDLES] = {"MPI_T_ERR_OUT_OF_HANDLES",
                                  "MPI_T: no more handles"},
    [MPI_T_ERR_OUT_OF_SESSIONS] = {"MPI_T_ERR_OUT_OF_SESSIONS",
                                   "MPI_T: no more sessions"},
    [MPI_T_ERR_INVALID_SESSION] = {"MPI_T_ERR_INVALID_SESSION",
                                   "MPI_T: invalid session"},
    [MPI_T_ERR_CVAR_SET_NOT_NOW] = {"MPI_T_ERR_CVAR_SET_NOT_NOW",
                                    "MPI_T: variable cannot be set now"},
    [MPI_T_ERR_CVAR_SET_NEVER] = {"MPI_T_ERR_CVAR_SET_NEVER",
                                  "MPI_T: variable can never be set"},
    [MPI_T_ERR_PVAR_NO_STARTSTOP] = {"MPI_T_ERR_PVAR_NO_STARTSTOP",
                                     "MPI_T: variable cannot start/stop"},
    [MPI_T_ERR_PVAR_NO_WRITE] = {"MPI_T_ERR_PVAR_NO_WRITE",
                                 "MPI_T: variable cannot be written"},
    [MPI_T_ERR_PVAR_NO_ATOMIC] = {"MPI_T_ERR_PVAR_NO_ATOMIC",
                                  "MPI_T: variable cannot be read and "
                                  "written atomically"},
    [MPI_T_ERR_INVALID_NAME] = {"MPI_T_ERR_INVALID_NAME",
                                "MPI_T: no variable by that name"},
    [MPI_T_ERR_INVALID] = {"MPI_T_ERR_INVALID", "MPI_T: invalid use"},
    [MPI_ERR_SESSION] = {"MPI_ERR_SESSION", "Invalid session"},
    [MPI_ERR_PROC_ABORTED] = {"MPI_ERR_PROC_ABORTED",
                              "A peer process has terminated"},
    [MPI_ERR_VALUE_TOO_LARGE] = {"MPI_ERR_VALUE_TOO_LARGE",
                                 "Value too large for the output argument"},
    [MPI_T_ERR_NOT_SUPPORTED] = {"MPI_T_ERR_NOT_SUPPORTED",
                                 "MPI_T: not supported"},
};

static bool fy_errclass_valid(int cls)
{
    return cls >= 0 && (size_t)cls < FY_ARRAY_LEN(s_classes) &&
           s_classes[cls].name != NULL;
}

static struct fy_user_code *fy_user_code(int code);

const char *fy_errclass_name(int errclass)
{
    if (fy_errclass_valid(errclass))
        return s_classes[errclass].name;
    /* Only for messages printed at once (one buffer per thread). */
    static _Thread_local char buf[48];
    snprintf(buf, sizeof(buf), "%s error code %d",
             fy_user_code(errclass) ? "user-defined" : "unknown", errclass);
    return buf;
}

int fy_errno_to_class(int err)
{
    switch (err) {
    case 0:
    case -ECANCELED: /* a cancelled request is a status, not an error */
        return MPI_SUCCESS;
    case -EMSGSIZE:
        return MPI_ERR_TRUNCATE;
    case -EBADMSG: /* a collective's counts differ (coll/shm.h) */
        return MPI_ERR_COUNT;
    case -ENOMEM:
        return MPI_ERR_NO_MEM;
    case -EINVAL:
        return MPI_ERR_ARG;
    case -ENOTSUP:
        return MPI_ERR_UNSUPPORTED_OPERATION;
    case -EOVERFLOW:
        return MPI_ERR_COUNT;
    case -ENOSPC: /* context ids exhausted: MPICH says "other" too */
    case -EPIPE:  /* a peer went away */
    case -EIO:
    case -EFAULT:
    default:
        return err > 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
    }
}

/* The last error reported by this thread, for the fatal message (per
 * thread: under MPI_THREAD_MULTIPLE errors may be raised with no lock). */
static _Thread_local char s_last_msg[MPI_MAX_ERROR_STRING / 2];

/* Format the detail of an error raised by 'fn' into s_last_msg. */
static void note_error(const char *fn, const char *fmt, va_list ap)
{
    if (strncmp(fn, "PMPI_", 5) == 0)
        fn++;
    char detail[sizeof(s_last_msg) - 64]; /* room for the call name */
    vsnprintf(detail, sizeof(detail), fmt, ap);
    snprintf(s_last_msg, sizeof(s_last_msg), "%s: %s", fn, detail);
}

/* Apply handler 'eh' (NULL: fatal) to an error of object handle 'obj'
 * (a communicator or a window: both handler types take an int handle). */
static int dispatch(struct fy_errhandler *eh, int obj, int errclass,
                    const char *fn)
{
    if (strncmp(fn, "PMPI_", 5) == 0)
        fn++;
    MPI_Errhandler h = eh ? eh->handle : MPI_ERRORS_ARE_FATAL;
    if (h == MPI_ERRORS_RETURN)
        return errclass;
    if (eh && eh->fn) {
        /* The handler gets copies: MPI lets it look, not change ours. */
        int oh = obj;
        int code = errclass;
        int od = fy_mt_callback_begin(); /* util/mt.h: no object lock */
        eh->fn(&oh, &code);
        fy_mt_callback_end(od);
        return errclass;
    }

    /* MPI_ERRORS_ARE_FATAL and MPI_ERRORS_ABORT: say what went wrong in
     * one write (lines of different ranks must not interleave), keep what
     * the program printed so far, and go; the launcher takes the rest of
     * the job down on our exit status. */
    char line[MPI_MAX_ERROR_STRING];
    int n = snprintf(line, sizeof(line), "Ferry: rank %d: %s (%s)\n",
                     fy_log_rank, s_last_msg, fy_errclass_name(errclass));
    if (n > 0) {
        if ((size_t)n >= sizeof(line)) {
            n = (int)sizeof(line) - 1;
            line[n - 1] = '\n';
        }
        ssize_t w = write(STDERR_FILENO, line, (size_t)n);
        (void)w;
    }
    fflush(NULL);
    fy_fatal(1, "%s: the error handler is MPI_ERRORS_%s; aborting the job", fn,
             h == MPI_ERRORS_ABORT ? "ABORT" : "ARE_FATAL");
}

int fy_mpi_err(struct fy_comm *comm, int errclass, const char *fn,
               const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    note_error(fn, fmt, ap);
    va_end(ap);
    struct fy_comm *target = comm ? comm : fy_comm_get(MPI_COMM_WORLD);
    struct fy_errhandler *eh =
        target ? fy_errhandler_get(target->errhandler) : NULL;
    return dispatch(eh, target ? target->handle : MPI_COMM_NULL, errclass, fn);
}

int fy_mpi_err_obj(MPI_Errhandler errhandler, int obj, int errclass,
                   const char *fn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    note_error(fn, fmt, ap);
    va_end(ap);
    return dispatch(fy_errhandler_get(errhandler), obj, errclass, fn);
}

int fy_mpi_err_file(MPI_Errhandler errhandler, MPI_File fh, int errclass,
                    const char *fn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    note_error(fn, fmt, ap);
    va_end(ap);
    struct fy_errhandler *eh = fy_errhandler_get(errhandler);
    if (eh && eh->fn) {
        /* MPI_File_create_errhandler stored the function under the
         * communicator type; call it through its own. The handler gets
         * copies: MPI lets it look, not change ours. */
        MPI_File_errhandler_function *f =
            (MPI_File_errhandler_function *)(void (*)(void))eh->fn;
        MPI_File copy = fh;
        int code = errclass;
        int od = fy_mt_callback_begin(); /* util/mt.h: no object lock */
        f(&copy, &code);
        fy_mt_callback_end(od);
        return errclass;
    }
    return dispatch(eh, 0, errclass, fn);
}

/* ---- user-defined classes and codes ----------------------------------
 * MPI_Add_error_class/code hand out numbers above MPI_ERR_LASTCODE (as
 * MPICH does: MPI_LASTUSEDCODE must not be below it);
 * each remembers its class (a class is its own) and an optional string. */

#define FY_FIRST_USER_CODE (MPI_ERR_LASTCODE + 1)

struct fy_user_code {
    int cls;
    char *text; /* MPI_Add_error_string, or NULL */
};

static struct fy_user_code *s_user;
static int s_nuser, s_user_cap;

static struct fy_user_code *fy_user_code(int code)
{
    int i = code - FY_FIRST_USER_CODE;
    return i >= 0 && i < s_nuser ? &s_user[i] : NULL;
}

/* The class of any valid code, or -1. */
static int fy_code_class(int code)
{
    if (fy_errclass_valid(code))
        return code; /* predefined codes are their own classes */
    struct fy_user_code *u = fy_user_code(code);
    return u ? u->cls : -1;
}

static int fy_user_code_add(int cls, int *code_out)
{
    if (s_nuser == s_user_cap) {
        int ncap = s_user_cap ? s_user_cap * 2 : 16;
        struct fy_user_code *n = realloc(s_user, (size_t)ncap * sizeof(*n));
        if (!n)
            return -ENOMEM;
        s_user = n;
        s_user_cap = ncap;
    }
    int code = FY_FIRST_USER_CODE + s_nuser;
    s_user[s_nuser++] =
        (struct fy_user_code){.cls = cls < 0 ? code : cls, .text = NULL};
    /* MPI_LASTUSEDCODE follows what we hand out. */
    *fy_attr_predefined(MPI_LASTUSEDCODE) = code;
    *code_out = code;
    return 0;
}

FY_API int PMPI_Add_error_class(int *errorclass)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(errorclass != NULL, NULL, MPI_ERR_ARG, __func__,
             "errorclass is NULL");
    if (fy_user_code_add(-1, errorclass) != 0)
        return fy_mpi_err(NULL, MPI_ERR_NO_MEM, __func__, "out of memory");
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Add_error_class)

FY_API int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(errorcode != NULL, NULL, MPI_ERR_ARG, __func__,
             "errorcode is NULL");
    FY_CHECK(fy_code_class(errorclass) == errorclass, NULL, MPI_ERR_ARG,
             __func__, "%d is not an error class", errorclass);
    if (fy_user_code_add(errorclass, errorcode) != 0)
        return fy_mpi_err(NULL, MPI_ERR_NO_MEM, __func__, "out of memory");
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Add_error_code)

FY_API int PMPI_Add_error_string(int errorcode, const char *string)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(string != NULL, NULL, MPI_ERR_ARG, __func__, "string is NULL");
    struct fy_user_code *u = fy_user_code(errorcode);
    FY_CHECK(u != NULL, NULL, MPI_ERR_ARG, __func__,
             "%d is not a code or class added by MPI_Add_error_class/code",
             errorcode);
    char *t = strndup(string, MPI_MAX_ERROR_STRING - 1);
    if (!t)
        return fy_mpi_err(NULL, MPI_ERR_NO_MEM, __func__, "out of memory");
    free(u->text);
    u->text = t;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Add_error_string)

/* ---- error strings and classes --------------------------------------- */

FY_API int PMPI_Error_class(int errorcode, int *errorclass)
{
    FY_MT_NONE();
    /* Allowed before MPI_Init and after MPI_Finalize. Predefined codes
     * need no lock; user codes live in a table MPI_Add_error_class/code
     * grow under the engine lock. */
    int locked = errorcode > MPI_ERR_LASTCODE ? fy_mt_enter() : 0;
    int cls = fy_code_class(errorcode);
    fy_mt_leave(&locked);
    if (cls < 0)
        return fy_mpi_err(NULL, MPI_ERR_ARG, __func__, "invalid error code %d",
                          errorcode);
    if (!errorclass)
        return fy_mpi_err(NULL, MPI_ERR_ARG, __func__, "errorclass is NULL");
    *errorclass = cls;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Error_class)

FY_API int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    FY_MT_NONE();
    if (!string || !resultlen)
        return fy_mpi_err(NULL, MPI_ERR_ARG, __func__, "%s is NULL",
                          !string ? "string" : "resultlen");
    if (!fy_errclass_valid(errorcode)) {
        /* A user code: its table and text change under the engine lock
         * (MPI_Add_error_*), so read them under it. */
        int locked = fy_mt_enter();
        struct fy_user_code *u = fy_user_code(errorcode);
        int n = u ? snprintf(string, MPI_MAX_ERROR_STRING, "%s",
                             u->text ? u->text : "")
                  : -1;
        fy_mt_leave(&locked);
        if (n < 0)
            return fy_mpi_err(NULL, MPI_ERR_ARG, __func__,
                              "invalid error code %d", errorcode);
        *resultlen = FY_MIN(n, MPI_MAX_ERROR_STRING - 1);
        return MPI_SUCCESS;
    }
    const struct fy_errclass_info *ci = &s_classes[errorcode];
    /* A function of the code alone: the same code always reads the same
     * (programs compare strings), and never carries detail from an
     * earlier, unrelated call. The detail of an error goes to the fatal
     * handler's message. */
    int n =
        snprintf(string, MPI_MAX_ERROR_STRING, "%s (%s)", ci->text, ci->name);
    *resultlen = FY_MIN(n, MPI_MAX_ERROR_STRING - 1);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Error_string)

/* ---- communicator error handlers ------------------------------------- */

FY_API int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn,
                                       MPI_Errhandler *errhandler)
{
    FY_MT_OBJ();
    FY_CHECK_INIT(__func__);
    FY_CHECK(fn != NULL, NULL, MPI_ERR_ARG, __func__,
             "comm_errhandler_fn is NULL");
    FY_CHECK(errhandler != NULL, NULL, MPI_ERR_ARG, __func__,
             "errhandler is NULL");
    struct fy_errhandler *eh;
    if (fy_errhandler_create(fn, &eh) != 0)
        return fy_mpi_err(NULL, MPI_ERR_NO_MEM, __func__,
                          "out of memory for an error handler");
    *errhandler = eh->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Comm_create_errhandler)

FY_API int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    struct fy_errhandler *eh = fy_errhandler_get(errhandler);
    FY_CHECK(eh != NULL, c, MPI_ERR_ARG, __func__, "invalid error handler 0x%x",
             (unsigned)errhandler);
    fy_comm_set_errhandler(c, eh);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Comm_set_errhandler)

FY_API int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    FY_CHECK(errhandler != NULL, c, MPI_ERR_ARG, __func__,
             "errhandler is NULL");
    struct fy_errhandler *eh = fy_errhandler_get(c->errhandler);
    /* The returned handle is a new reference the user frees. */
    if (eh)
        fy_errhandler_retain(eh);
    *errhandler = c->errhandler;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Comm_get_errhandler)

FY_API int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    FY_MT_OBJ();
    FY_CHECK_INIT(__func__);
    FY_CHECK(errhandler != NULL, NULL, MPI_ERR_ARG, __func__,
             "errhandler is NULL");
    struct fy_errhandler *eh = fy_errhandler_get(*errhandler);
    FY_CHECK(eh != NULL, NULL, MPI_ERR_ARG, __func__,
             "invalid error handler 0x%x", (unsigned)*errhandler);
    fy_errhandler_release(eh); /* no-op for the predefined ones */
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Errhandler_free)

FY_API int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    struct fy_errhandler *eh = fy_errhandler_get(c->errhandler);
    if (!eh || eh->handle == MPI_ERRORS_RETURN)
        return MPI_SUCCESS;
    if (eh->fn) {
        MPI_Comm ch = comm;
        int code = errorcode;
        eh->fn(&ch, &code);
        return MPI_SUCCESS;
    }
    /* Fatal: report through the common path, which does not return. */
    return fy_mpi_err(c, errorcode, __func__, "called with error code %d",
                      errorcode);
}
FY_ALIAS(MPI_Comm_call_errhandler)

/* ---- MPI-1 names ----------------------------------------------------------
 * Removed from the standard, still exported by MPICH (and called by old
 * codes): the same as the Comm_ calls. */

FY_API int PMPI_Errhandler_create(MPI_Handler_function *function,
                                  MPI_Errhandler *errhandler)
{
    FY_MT_OBJ();
    return PMPI_Comm_create_errhandler(function, errhandler);
}
FY_ALIAS(MPI_Errhandler_create)

FY_API int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    FY_MT_ENTER();
    return PMPI_Comm_set_errhandler(comm, errhandler);
}
FY_ALIAS(MPI_Errhandler_set)

FY_API int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    FY_MT_ENTER();
    return PMPI_Comm_get_errhandler(comm, errhandler);
}
FY_ALIAS(MPI_Errhandler_get)
