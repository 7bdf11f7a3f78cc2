/* SPDX-License-Identifier: MIT */
/* Shared by the MPI entry points: export macros, argument checks and the
 * one place where internal errors become MPI error classes. */
#ifndef FY_MPI_IMPL_H
#define FY_MPI_IMPL_H

#include <mpi.h>

#include "comm/comm.h"
#include "dtype/dtype.h"
#include "p2p/p2p.h"
#include "util/mt.h"
#include "util/util.h"

/* Define PMPI_x with default visibility; FY_ALIAS(MPI_x) after it makes
 * MPI_x a weak alias so tools can interpose. */
#define FY_API __attribute__((visibility("default")))
#define FY_ALIAS(name)                                                         \
    extern __typeof__(name) name                                               \
        __attribute__((weak, alias("P" #name), visibility("default")));

/* Library state, set by MPI_Init/Finalize. */
extern int fy_mpi_state; /* the core: 0 not yet up, 1 up, 2 taken down */

/* Sessions (session.c) hold the core as MPI_Init does: bring it up if it
 * is not (MPI_SUCCESS, or MPI_ERR_OTHER once it was taken down) and count
 * one more holder; release drops that count. */
int fy_mpi_core_hold(const char *fn);
void fy_mpi_core_release(void);
/* The highest thread level Ferry provides, and what the program got (from
 * MPI_Init_thread or a session): MULTIPLE turns the library lock on. */
int fy_mpi_thread_level_max(void);
void fy_mpi_thread_level_use(int level);

/* Report an error raised by the MPI call 'fn' (pass __func__: a leading 'P'
 * is dropped) on 'comm' (NULL means MPI_COMM_WORLD's handler applies).
 * Under MPI_ERRORS_RETURN returns 'errclass'; under MPI_ERRORS_ARE_FATAL
 * prints "Ferry: rank R: MPI_Send: <message> (MPI_ERR_RANK)" and takes the
 * job down; a user handler is called, then errclass is returned. */
int fy_mpi_err(struct fy_comm *comm, int errclass, const char *fn,
               const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The same for an object with its own error handler (a window): 'obj' is
 * its handle, passed to a user handler. */
int fy_mpi_err_obj(MPI_Errhandler errhandler, int obj, int errclass,
                   const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* The same for a file (MPI_File is a pointer, so a user handler gets an
 * MPI_File *): 'errhandler' is the file's, or MPI_FILE_NULL's. */
int fy_mpi_err_file(MPI_Errhandler errhandler, MPI_File fh, int errclass,
                    const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Map an internal negative errno to an MPI error class. */
int fy_errno_to_class(int err);

/* Name of an error class ("MPI_ERR_RANK"). */
const char *fy_errclass_name(int errclass);

/* Fill an MPI_Status (unless MPI_STATUS_IGNORE) from raw fields. */
void fy_status_set(MPI_Status *st, int source, int tag, int err,
                   MPI_Count bytes, bool cancelled);

/* Every entry point that needs an initialised library starts with this. */
#define FY_CHECK_INIT(fn)                                                      \
    do {                                                                       \
        if (FY_UNLIKELY(fy_mpi_state != 1))                                    \
            return fy_mpi_err(NULL, MPI_ERR_OTHER, fn,                         \
                              fy_mpi_state == 0                                \
                                  ? "called before MPI_Init"                   \
                                  : "called after MPI_Finalize");              \
    } while (0)

/* Resolve a communicator handle or report MPI_ERR_COMM. */
#define FY_GET_COMM(var, h, fn)                                                \
    struct fy_comm *var = fy_comm_get(h);                                      \
    if (FY_UNLIKELY(!var))                                                     \
        return fy_mpi_err(NULL, MPI_ERR_COMM, fn, "invalid communicator 0x%x", \
                          (unsigned)(h));

/* Calls MPI defines on intracommunicators only: MPI_ERR_COMM otherwise. */
#define FY_CHECK_INTRA(c, fn)                                                  \
    FY_CHECK(!fy_comm_is_inter(c), c, MPI_ERR_COMM, fn,                        \
             "%s is an intercommunicator (allowed on intracommunicators "      \
             "only)",                                                          \
             (c)->name[0] ? (c)->name : "the communicator")

/* Resolve a datatype handle or report MPI_ERR_TYPE. */
#define FY_GET_TYPE(var, h, fn)                                                \
    struct fy_dtype *var = fy_dtype_get(h);                                    \
    if (FY_UNLIKELY(!var))                                                     \
        return fy_mpi_err(NULL, MPI_ERR_TYPE, fn, "invalid datatype 0x%x",     \
                          (unsigned)(h));

/* Check 'cond' or report 'cls' with a message. */
#define FY_CHECK(cond, comm, cls, fn, ...)                                     \
    do {                                                                       \
        if (FY_UNLIKELY(!(cond)))                                              \
            return fy_mpi_err(comm, cls, fn, __VA_ARGS__);                     \
    } while (0)

/* Attribute entry points shared by communicators, datatypes and windows
 * (src/mpi/attr.c): 'obj' is the object's handle, 'errcomm' the
 * communicator whose error handler applies (NULL: MPI_COMM_WORLD's). Each
 * returns an MPI error class, already reported. */
int fy_mpi_keyval_create(enum fy_attr_kind kind, fy_attr_copy_fn *copy_fn,
                         fy_attr_delete_fn *delete_fn, int *keyval,
                         void *extra_state, const char *fn);
int fy_mpi_keyval_free(enum fy_attr_kind kind, int *keyval, const char *fn);
int fy_mpi_attr_set(struct fy_attr **list, int obj, enum fy_attr_kind kind,
                    int keyval, void *val, struct fy_comm *errcomm,
                    const char *fn);
int fy_mpi_attr_get(struct fy_attr *const *list, enum fy_attr_kind kind,
                    int keyval, void *attribute_val, int *flag,
                    struct fy_comm *errcomm, const char *fn);
int fy_mpi_attr_delete(struct fy_attr **list, int obj, enum fy_attr_kind kind,
                       int keyval, struct fy_comm *errcomm, const char *fn);

/* Finish a collective entry point (src/mpi/coll.c): rc is the collective's
 * result (0 or -errno, reported as an MPI error class on c); for a
 * nonblocking call (request != NULL) s is the started schedule, which a
 * new request then names. Returns an MPI error code. */
struct fy_sched;
/* Free what the nonblocking collectives' requests keep (MPI_Finalize). */
void fy_mpi_coll_finalize(void);
int fy_mpi_coll_finish(struct fy_comm *c, int rc, struct fy_sched *s,
                       MPI_Request *request, const char *fn);

/* Info objects (src/mpi/info.c). fy_info_get resolves a handle (NULL if
 * invalid; MPI_INFO_ENV is the predefined read-only object); new objects
 * get a handle (fy_info_handle) the user may free. Each returns 0 or
 * -ENOMEM. */
struct fy_info;
struct fy_info *fy_info_get(MPI_Info h);
int fy_info_new(struct fy_info **out);
int fy_info_dup(const struct fy_info *src, struct fy_info **out);
int fy_info_put(struct fy_info *in, const char *key, const char *val);
/* The value of key in 'in' (NULL if absent or in is NULL). */
const char *fy_info_lookup(const struct fy_info *in, const char *key);
MPI_Info fy_info_handle(const struct fy_info *in);
void fy_info_free(struct fy_info *in);

#endif /* FY_MPI_IMPL_H */
