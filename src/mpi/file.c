/* SPDX-License-Identifier: MIT */
/* MPI-IO entry points (MPI 4.0 chapter 14): argument checks, conversion of
 * the user's buffer to the view's data stream (packing, external32), file
 * pointers, error classes and error handlers. The data movement is in
 * src/io/. Nonblocking calls do their I/O at once and return a request
 * that is already complete (MPI allows it; Ferry has no I/O thread).
 * Split collectives do their work at _begin; _end reports it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coll/coll.h"
#include "io/io.h"
#include "mpi/mpi_impl.h"
#include "mpi/request.h"

/* ---- handles -------------------------------------------------------------
 * MPI_File is a pointer in MPICH's ABI; the open files are also kept in a
 * table so a handle can be checked before use and has a Fortran index. */

static struct fy_file **s_files;
static int s_nfiles;
/* The error handler of MPI_FILE_NULL: used by File_open, File_delete and
 * for invalid handles; new files start with it. MPI_ERRORS_RETURN. */
static MPI_Errhandler s_null_eh = MPI_ERRORS_RETURN;

/* The table is read by calls holding only their file's lock and changed
 * by File_open/close under the engine lock: both hold the object lock
 * around it under MPI_THREAD_MULTIPLE (util/mt.h: it is innermost). */
static void files_lock(void)
{
    if (FY_UNLIKELY(fy_mt_on))
        fy_mt_obj_lock();
}

static void files_unlock(void)
{
    if (FY_UNLIKELY(fy_mt_on))
        fy_mt_obj_unlock();
}

static struct fy_file *file_get(MPI_File fh)
{
    struct fy_file *f = NULL;
    files_lock();
    for (int i = 0; i < s_nfiles && !f; i++)
        if (s_files[i] && (MPI_File)s_files[i] == fh)
            f = s_files[i];
    files_unlock();
    return f;
}

static int file_register(struct fy_file *f)
{
    int rc = 0;
    files_lock();
    for (int i = 0; i < s_nfiles; i++) {
        if (!s_files[i]) {
            s_files[i] = f;
            f->handle = i + 1;
            goto out_unlock;
        }
    }
    struct fy_file **n = realloc(s_files, sizeof(*n) * (size_t)(s_nfiles + 1));
    if (!n) {
        rc = -ENOMEM;
        goto out_unlock;
    }
    s_files = n;
    s_files[s_nfiles++] = f;
    f->handle = s_nfiles;
out_unlock:
    files_unlock();
    return rc;
}

static void file_unregister(struct fy_file *f)
{
    files_lock();
    if (f->handle > 0 && f->handle <= s_nfiles)
        s_files[f->handle - 1] = NULL;
    files_unlock();
}

/* ---- errors -------------------------------------------------------------- */

/* The MPI class of an errno from the file system. */
static int io_class(int err)
{
    switch (err) {
    case -ENOENT:
        return MPI_ERR_NO_SUCH_FILE;
    case -EEXIST:
        return MPI_ERR_FILE_EXISTS;
    case -EACCES:
    case -EPERM:
        return MPI_ERR_ACCESS;
    case -EROFS:
        return MPI_ERR_READ_ONLY;
    case -ENOSPC:
    case -EFBIG:
        return MPI_ERR_NO_SPACE;
    case -EDQUOT:
        return MPI_ERR_QUOTA;
    case -EISDIR:
    case -ENOTDIR:
    case -ENAMETOOLONG:
    case -ELOOP:
        return MPI_ERR_BAD_FILE;
    case -EBUSY:
    case -ETXTBSY:
        return MPI_ERR_FILE_IN_USE;
    case -ENOMEM:
        return MPI_ERR_NO_MEM;
    case -EINVAL:
        return MPI_ERR_ARG;
    case -ENOTSUP:
        return MPI_ERR_UNSUPPORTED_OPERATION;
    default:
        return MPI_ERR_IO;
    }
}

/* Report through f's handler (f NULL: MPI_FILE_NULL's). */
static inline MPI_Errhandler eh_of(const struct fy_file *f)
{
    return f ? f->errhandler : s_null_eh;
}
#define FERR(f, cls, fn, ...)                                                  \
    fy_mpi_err_file(eh_of(f), (MPI_File)(f), cls, fn, __VA_ARGS__)

#define GET_FILE(var, h, fn)                                                   \
    struct fy_file *var = file_get(h);                                         \
    if (FY_UNLIKELY(!var))                                                     \
        return FERR((struct fy_file *)NULL, MPI_ERR_FILE, fn,                  \
                    "invalid file handle");

#define FCHECK(cond, f, cls, fn, ...)                                          \
    do {                                                                       \
        if (FY_UNLIKELY(!(cond)))                                              \
            return FERR(f, cls, fn, __VA_ARGS__);                              \
    } while (0)

/* ---- data representations ----------------------------------------------- */

struct datarep {
    char name[MPI_MAX_DATAREP_STRING];
    bool converts; /* user conversion functions given (not supported) */
};
static struct datarep *s_reps;
static int s_nreps;

static bool datarep_builtin(const char *s)
{
    return !strcmp(s, "native") || !strcmp(s, "internal") ||
           !strcmp(s, "external32");
}

static const struct datarep *datarep_user(const char *s)
{
    for (int i = 0; i < s_nreps; i++)
        if (!strcmp(s_reps[i].name, s))
            return &s_reps[i];
    return NULL;
}

static int register_datarep(const char *name, bool converts, const char *fn)
{
    FY_CHECK_INIT(fn);
    FCHECK(name != NULL && name[0], NULL, MPI_ERR_ARG, fn, "datarep is empty");
    FCHECK(strlen(name) < MPI_MAX_DATAREP_STRING, NULL, MPI_ERR_ARG, fn,
           "datarep name longer than MPI_MAX_DATAREP_STRING");
    FCHECK(!datarep_builtin(name) && !datarep_user(name), NULL,
           MPI_ERR_DUP_DATAREP, fn, "datarep \"%s\" is already defined", name);
    struct datarep *n = realloc(s_reps, sizeof(*n) * (size_t)(s_nreps + 1));
    FCHECK(n != NULL, NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    s_reps = n;
    snprintf(s_reps[s_nreps].name, MPI_MAX_DATAREP_STRING, "%s", name);
    s_reps[s_nreps++].converts = converts;
    return MPI_SUCCESS;
}

FY_API int PMPI_Register_datarep(
    const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
    MPI_Datarep_conversion_function *write_conversion_fn,
    MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    FY_MT_ENTER();
    (void)dtype_file_extent_fn;
    (void)extra_state;
    return register_datarep(datarep, read_conversion_fn || write_conversion_fn,
                            __func__);
}
FY_ALIAS(MPI_Register_datarep)

FY_API int PMPI_Register_datarep_c(
    const char *datarep, MPI_Datarep_conversion_function_c *read_conversion_fn,
    MPI_Datarep_conversion_function_c *write_conversion_fn,
    MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    FY_MT_ENTER();
    (void)dtype_file_extent_fn;
    (void)extra_state;
    return register_datarep(datarep, read_conversion_fn || write_conversion_fn,
                            __func__);
}
FY_ALIAS(MPI_Register_datarep_c)

/* ---- open, close, delete ---------------------------------------------------
 */

static bool amode_valid(int amode)
{
    int rw = (amode & MPI_MODE_RDONLY ? 1 : 0) +
             (amode & MPI_MODE_WRONLY ? 1 : 0) +
             (amode & MPI_MODE_RDWR ? 1 : 0);
    if (rw != 1)
        return false;
    if ((amode & MPI_MODE_RDONLY) &&
        (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return false;
    if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        return false;
    int known = MPI_MODE_CREATE | MPI_MODE_RDONLY | MPI_MODE_WRONLY |
                MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE |
                MPI_MODE_UNIQUE_OPEN | MPI_MODE_EXCL | MPI_MODE_APPEND |
                MPI_MODE_SEQUENTIAL;
    return (amode & ~known) == 0;
}

/* Hints Ferry reads: cb_nodes (aggregators), cb_buffer_size (bytes per
 * aggregator and round), romio_cb_write / romio_cb_read ("disable" turns
 * two-phase off, anything else leaves it on). Others are ignored. */
static void apply_hints(struct fy_file *f, MPI_Info info)
{
    const struct fy_info *in = info == MPI_INFO_NULL ? NULL : fy_info_get(info);
    if (!in)
        return;
    const char *v;
    if ((v = fy_info_lookup(in, "cb_nodes")) && atoi(v) > 0)
        f->cb_nodes = atoi(v);
    if ((v = fy_info_lookup(in, "cb_buffer_size")) && atoll(v) >= 4096)
        f->cb_buffer_size = atoll(v);
    if ((v = fy_info_lookup(in, "romio_cb_write")))
        f->cb_write = strcmp(v, "disable") != 0;
    if ((v = fy_info_lookup(in, "romio_cb_read")))
        f->cb_read = strcmp(v, "disable") != 0;
}

FY_API int PMPI_File_open(MPI_Comm comm, const char *filename, int amode,
                          MPI_Info info, MPI_File *fh)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    struct fy_comm *c = fy_comm_get(comm);
    FCHECK(c != NULL, NULL, MPI_ERR_COMM, fn, "invalid communicator");
    FCHECK(!fy_comm_is_inter(c), NULL, MPI_ERR_COMM, fn,
           "intercommunicators cannot open files");
    FCHECK(fh != NULL, NULL, MPI_ERR_ARG, fn, "fh is NULL");
    FCHECK(filename != NULL && filename[0], NULL, MPI_ERR_BAD_FILE, fn,
           "empty file name");
    FCHECK(amode_valid(amode), NULL, MPI_ERR_AMODE, fn,
           "invalid access mode 0x%x", (unsigned)amode);
    FCHECK(info == MPI_INFO_NULL || fy_info_get(info), NULL, MPI_ERR_INFO, fn,
           "invalid info object");
    /* "ufs:" and similar prefixes name a file system driver (ROMIO's
     * convention): Ferry has one driver, POSIX, and drops the prefix. */
    size_t pl = strspn(filename, "abcdefghijklmnopqrstuvwxyz0123456789");
    if (pl >= 2 && pl <= 8 && filename[pl] == ':')
        filename += pl + 1;
    struct fy_file *f;
    int rc = fy_io_open(c, filename, amode, &f);
    if (rc)
        return FERR((struct fy_file *)NULL, io_class(rc), fn, "%s: %s",
                    filename, strerror(-rc));
    apply_hints(f, info);
    if (file_register(f) != 0) {
        fy_io_close(f);
        return FERR((struct fy_file *)NULL, MPI_ERR_NO_MEM, fn,
                    "out of memory");
    }
    f->errhandler = s_null_eh;
    struct fy_errhandler *eh = fy_errhandler_get(s_null_eh);
    if (eh)
        fy_errhandler_retain(eh);
    *fh = (MPI_File)f;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_File_open)

FY_API int PMPI_File_close(MPI_File *fh)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    FCHECK(fh != NULL, NULL, MPI_ERR_ARG, fn, "fh is NULL");
    GET_FILE(f, *fh, fn);
    MPI_Errhandler keep = f->errhandler;
    struct fy_errhandler *eh = fy_errhandler_get(keep);
    char path[256];
    snprintf(path, sizeof(path), "%s", f->path);
    file_unregister(f);
    int rc = fy_io_close(f);
    *fh = MPI_FILE_NULL;
    int ret = MPI_SUCCESS;
    if (rc)
        ret = fy_mpi_err_file(keep, MPI_FILE_NULL, io_class(rc), fn, "%s: %s",
                              path, strerror(-rc));
    if (eh)
        fy_errhandler_release(eh);
    return ret;
}
FY_ALIAS(MPI_File_close)

FY_API int PMPI_File_delete(const char *filename, MPI_Info info)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    (void)info;
    FCHECK(filename != NULL, NULL, MPI_ERR_ARG, fn, "filename is NULL");
    if (unlink(filename) != 0) {
        int e = -errno;
        return FERR((struct fy_file *)NULL, io_class(e), fn, "%s: %s", filename,
                    strerror(-e));
    }
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_File_delete)

/* ---- sizes, group, mode, info ---------------------------------------------
 */

static int set_size(MPI_File fh, MPI_Offset size, bool prealloc, const char *fn)
{
    FY_CHECK_INIT(fn);
    GET_FILE(f, fh, fn);
    FCHECK(size >= 0, f, MPI_ERR_ARG, fn, "negative size %lld",
           (long long)size);
    FCHECK(!(f->amode & MPI_MODE_RDONLY), f, MPI_ERR_ACCESS, fn,
           "file opened MPI_MODE_RDONLY");
    FCHECK(!(f->amode & MPI_MODE_SEQUENTIAL), f, MPI_ERR_UNSUPPORTED_OPERATION,
           fn, "file opened MPI_MODE_SEQUENTIAL");
    /* Nobody may still be reading or writing when rank 0 resizes. */
    int err = fy_coll_barrier(f->comm, NULL);
    if (!err && f->comm->rank == 0) {
        struct stat st;
        if (fstat(f->fd, &st) != 0) {
            err = -errno;
        } else if (!prealloc) {
            if (ftruncate(f->fd, (off_t)size) != 0)
                err = -errno;
        } else if (size > st.st_size) {
            int e = posix_fallocate(f->fd, 0, (off_t)size);
            if (e == EOPNOTSUPP || e == EINVAL)
                e = ftruncate(f->fd, (off_t)size) != 0 ? errno : 0;
            err = -e;
        }
    }
    int rc = fy_io_agree(f->comm, err);
    if (rc)
        return FERR(f, io_class(rc), fn, "%s: %s", f->path, strerror(-rc));
    return MPI_SUCCESS;
}

FY_API int PMPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    FY_MT_ENTER();
    return set_size(fh, size, false, __func__);
}
FY_ALIAS(MPI_File_set_size)

FY_API int PMPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    FY_MT_ENTER();
    return set_size(fh, size, true, __func__);
}
FY_ALIAS(MPI_File_preallocate)

FY_API int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    FY_MT_FILE(fh);
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_FILE(f, fh, fn);
    FCHECK(size != NULL, f, MPI_ERR_ARG, fn, "size is NULL");
    struct stat st;
    if (fstat(f->fd, &st) != 0)
        return FERR(f, MPI_ERR_IO, fn, "fstat: %s", strerror(errno));
    *size = (MPI_Offset)st.st_size;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_File_get_size)

FY_API int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_FILE(f, fh, fn);
    FCHECK(group != NULL, f, MPI_ERR_ARG, fn, "group is NULL");
    return PMPI_Comm_group(f->comm->handle, group);
}
FY_ALIAS(MPI_File_get_group)

FY_API int PMPI_File_get_amode(MPI_File fh, int *amode)
{
    FY_MT_FILE(fh);
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_FILE(f, fh, fn);
    FCHECK(amode != NULL, f, MPI_ERR_ARG, fn, "amode is NULL");
    *amode = f->amode;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_File_get_amode)

FY_API int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_FILE(f, fh, fn);
    FCHECK(info == MPI_INFO_NULL || fy_info_get(info), f, MPI_ERR_INFO, fn,
           "invalid info object");
    apply_hints(f, info);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_File_set_info)

FY_API int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_FILE(f, fh, fn);
    FCHECK(info_used != NULL, f, MPI_ERR_ARG, fn, "info_used is NULL");
    struct fy_info *in;
    FCHECK(fy_info_new(&in) == 0, f, MPI_ERR_NO_MEM, fn, "out of memory");
    char v[32];
    int rc = 0;
    snprintf(v, sizeof(v), "%d", f->cb_nodes);
    rc |= fy_info_put(in, "cb_nodes", v);
    snprintf(v, sizeof(v), "%lld", (long long)f->cb_buffer_size);
    rc |= fy_info_put(in, "cb_buffer_size", v);
    rc |= fy_info_put(in, "romio_cb_write", f->cb_write ? "enable" : "disable");
    rc |= fy_info_put(in, "romio_cb_read", f->cb_read ? "enable" : "disable");
    if (rc) {
        fy_info_free(in);
        return FERR(f, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    *info_used = fy_info_handle(in);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_File_get_info)

/* ---- views ------------------------------------------------------------------
 */

/* The view stream position of file byte 'off' (data of the view before
 * it), for MPI_SEEK_END. */
static MPI_Offset stream_pos_of(const struct fy_file *f, MPI_Offset off)
{
    const struct fy_io_view *v = &f->view;
    if (off <= v->disp)
        return 0;
    MPI_Offset rel = off - v->disp;
    MPI_Offset inst = v->ft_extent > 0 ? rel / v->ft_extent : 0;
    MPI_Offset in = rel - inst * v->ft_extent, data = inst * v->ft_size;
    for (int i = 0; i < v->nblocks; i++) {
        const struct fy_io_block *b = &v->blocks[i];
        if (in >= b->off + b->len)
            data += b->len;
        else if (in > b->off)
            data += in - b->off;
    }
    return data;
}

FY_API int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype,
                              MPI_Datatype filetype, const char *datarep,
                              MPI_Info info)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_FILE(f, fh, fn);
    struct fy_dtype *et = fy_dtype_get(etype), *ft = fy_dtype_get(filetype);
    FCHECK(et && et->committed, f, MPI_ERR_TYPE, fn, "invalid etype");
    FCHECK(ft && ft->committed, f, MPI_ERR_TYPE, fn, "invalid filetype");
    FCHECK(et->size > 0 && ft->size % et->size == 0, f, MPI_ERR_TYPE, fn,
           "filetype is not made of whole etypes");
    /* The standard leaves the class open; MPI_ERR_IO is what MPICH and
     * ROMIO give, so portable programs can test for one class. */
    bool writable = (f->amode & (MPI_MODE_WRONLY | MPI_MODE_RDWR)) != 0;
    for (int k = 0; k < 2; k++) {
        const char *what = k ? "filetype" : "etype";
        int vrc = fy_io_view_type_check(k ? ft : et, writable);
        FCHECK(vrc != -EINVAL, f, MPI_ERR_IO, fn,
               "%s has a negative displacement", what);
        FCHECK(vrc != -EDOM, f, MPI_ERR_IO, fn,
               "%s has decreasing displacements", what);
        FCHECK(vrc != -EEXIST, f, MPI_ERR_IO, fn,
               "%s has overlapping data and the file is open for writing",
               what);
    }
    if (!datarep)
        datarep = "native";
    const struct datarep *ur = datarep_user(datarep);
    FCHECK(datarep_builtin(datarep) || ur, f, MPI_ERR_UNSUPPORTED_DATAREP, fn,
           "unknown data representation \"%s\"", datarep);
    FCHECK(!ur || !ur->converts, f, MPI_ERR_UNSUPPORTED_DATAREP, fn,
           "data representation \"%s\" has conversion functions, which "
           "Ferry does not call",
           datarep);
    if (!strcmp(datarep, "external32"))
        FCHECK(fy_dtype_external_size(ft, 1) == ft->size &&
                   fy_dtype_external_size(et, 1) == et->size,
               f, MPI_ERR_UNSUPPORTED_DATAREP, fn,
               "external32 views need types of the same size in both "
               "representations");
    if (disp == MPI_DISPLACEMENT_CURRENT) {
        FCHECK(f->amode & MPI_MODE_SEQUENTIAL, f, MPI_ERR_ARG, fn,
               "MPI_DISPLACEMENT_CURRENT needs MPI_MODE_SEQUENTIAL");
        MPI_Offset cur = 0;
        if (f->shared)
            fy_io_shared_fetch_add(f, 0, &cur);
        disp = fy_io_byte_offset(f, cur * f->view.esize);
    }
    FCHECK(disp >= 0, f, MPI_ERR_ARG, fn, "negative displacement");
    FCHECK(info == MPI_INFO_NULL || fy_info_get(info), f, MPI_ERR_INFO, fn,
           "invalid info object");
    /* Nobody may still use the old shared pointer when rank 0 resets it. */
    int rc = fy_coll_barrier(f->comm, NULL);
    if (!rc)
        rc = fy_io_set_view(f, disp, et, ft, datarep);
    if (!rc)
        rc = fy_coll_barrier(f->comm, NULL);
    if (rc)
        return FERR(f, io_class(rc), fn, "%s", strerror(-rc));
    apply_hints(f, info);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_File_set_view)

FY_API int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp,
                              MPI_Datatype *etype, MPI_Datatype *filetype,
                              char *datarep)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_FILE(f, fh, fn);
    FCHECK(disp && etype && filetype && datarep, f, MPI_ERR_ARG, fn,
           "NULL argument");
    *disp = f->view.disp;
    *etype = fy_dtype_hand_out(f->view.etype);
    *filetype = fy_dtype_hand_out(f->view.ftype);
    strcpy(datarep, f->view.datarep);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_File_get_view)

FY_API int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype,
                                     MPI_Aint *extent)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_FILE(f, fh, fn);
    struct fy_dtype *dt = fy_dtype_get(datatype);
    FCHECK(dt, f, MPI_ERR_TYPE, fn, "invalid datatype");
    FCHECK(extent, f, MPI_ERR_ARG, fn, "extent is NULL");
    MPI_Aint e = dt->extent;
    if (f->view.external32) {
        MPI_Count x = fy_dtype_external_size(dt, 1);
        FCHECK(x >= 0, f, MPI_ERR_TYPE, fn, "type has no external32 form");
        e = (MPI_Aint)x + (dt->extent - dt->size);
    }
    *extent = e;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_File_get_type_extent)

FY_API int PMPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype,
                                       MPI_Count *extent)
{
    FY_MT_ENTER();
    MPI_Aint e = 0;
    int rc = PMPI_File_get_type_extent(fh, datatype, extent ? &e : NULL);
    if (rc == MPI_SUCCESS)
        *extent = e;
    return rc;
}
FY_ALIAS(MPI_File_get_type_extent_c)

/* ---- pointers ---------------------------------------------------------------
 */

static int seek_target(struct fy_file *f, MPI_Offset cur, MPI_Offset offset,
                       int whence, MPI_Offset *out)
{
    MPI_Offset base;
    if (whence == MPI_SEEK_SET) {
        base = 0;
    } else if (whence == MPI_SEEK_CUR) {
        base = cur;
    } else if (whence == MPI_SEEK_END) {
        struct stat st;
        if (fstat(f->fd, &st) != 0)
            return MPI_ERR_IO;
        base = stream_pos_of(f, (MPI_Offset)st.st_size) / f->view.esize;
    } else {
        return MPI_ERR_ARG;
    }
    if (base + offset < 0)
        return MPI_ERR_ARG;
    *out = base + offset;
    return MPI_SUCCESS;
}

FY_API int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    FY_MT_FILE(fh);
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_FILE(f, fh, fn);
    FCHECK(!(f->amode & MPI_MODE_SEQUENTIAL), f, MPI_ERR_UNSUPPORTED_OPERATION,
           fn, "file opened MPI_MODE_SEQUENTIAL");
    MPI_Offset to;
    int cls = seek_target(f, f->pos, offset, whence, &to);
    FCHECK(cls == MPI_SUCCESS, f, cls, fn,
           "bad whence or a position before the start of the view");
    f->pos = to;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_File_seek)

FY_API int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_FILE(f, fh, fn);
    FCHECK(f->shared, f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
           "no shared file pointer on this file: %s", strerror(-f->shared_err));
    MPI_Offset cur, to = 0;
    fy_io_shared_fetch_add(f, 0, &cur);
    int cls = seek_target(f, cur, offset, whence, &to);
    /* Collective: everyone has read the old value before rank 0 moves it,
     * and the new one is in place before anyone returns. */
    int rc = fy_coll_barrier(f->comm, NULL);
    if (!rc && cls == MPI_SUCCESS && f->comm->rank == 0)
        fy_io_shared_set(f, to);
    if (!rc)
        rc = fy_coll_barrier(f->comm, NULL);
    FCHECK(cls == MPI_SUCCESS, f, cls, fn,
           "bad whence or a position before the start of the view");
    if (rc)
        return FERR(f, io_class(rc), fn, "%s", strerror(-rc));
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_File_seek_shared)

FY_API int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    FY_MT_FILE(fh);
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_FILE(f, fh, fn);
    FCHECK(offset, f, MPI_ERR_ARG, fn, "offset is NULL");
    *offset = f->pos;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_File_get_position)

FY_API int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_FILE(f, fh, fn);
    FCHECK(offset, f, MPI_ERR_ARG, fn, "offset is NULL");
    FCHECK(f->shared, f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
           "no shared file pointer on this file: %s", strerror(-f->shared_err));
    fy_io_shared_fetch_add(f, 0, offset);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_File_get_position_shared)

FY_API int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset,
                                     MPI_Offset *disp)
{
    FY_MT_FILE(fh);
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_FILE(f, fh, fn);
    FCHECK(disp, f, MPI_ERR_ARG, fn, "disp is NULL");
    FCHECK(offset >= 0, f, MPI_ERR_ARG, fn, "negative offset");
    *disp = fy_io_byte_offset(f, offset * f->view.esize);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_File_get_byte_offset)

/* ---- consistency
 * -------------------------------------------------------------- */

FY_API int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_FILE(f, fh, fn);
    int rc = fy_coll_barrier(f->comm, NULL);
    if (rc)
        return FERR(f, io_class(rc), fn, "%s", strerror(-rc));
    f->atomic = flag != 0;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_File_set_atomicity)

FY_API int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
    FY_MT_FILE(fh);
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_FILE(f, fh, fn);
    FCHECK(flag, f, MPI_ERR_ARG, fn, "flag is NULL");
    *flag = f->atomic;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_File_get_atomicity)

FY_API int PMPI_File_sync(MPI_File fh)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    GET_FILE(f, fh, fn);
    int err = 0;
    if (!(f->amode & MPI_MODE_RDONLY) && fsync(f->fd) != 0 && errno != EINVAL)
        err = -errno;
    int rc = fy_io_agree(f->comm, err);
    if (rc)
        return FERR(f, io_class(rc), fn, "fsync %s: %s", f->path,
                    strerror(-rc));
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_File_sync)

/* ---- error handlers
 * ------------------------------------------------------------ */

FY_API int
PMPI_File_create_errhandler(MPI_File_errhandler_function *file_errhandler_fn,
                            MPI_Errhandler *errhandler)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    FCHECK(file_errhandler_fn && errhandler, NULL, MPI_ERR_ARG, fn,
           "NULL argument");
    struct fy_errhandler *eh;
    /* Stored as the communicator kind; fy_mpi_err_file casts it back to
     * MPI_File_errhandler_function before calling it. */
    FCHECK(fy_errhandler_create((MPI_Comm_errhandler_function *)(void (*)(
                                    void))file_errhandler_fn,
                                &eh) == 0,
           NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    *errhandler = eh->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_File_create_errhandler)

FY_API int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    struct fy_file *f = NULL;
    if (file != MPI_FILE_NULL) {
        f = file_get(file);
        FCHECK(f, NULL, MPI_ERR_FILE, fn, "invalid file handle");
    }
    struct fy_errhandler *eh = fy_errhandler_get(errhandler);
    FCHECK(eh, f, MPI_ERR_ARG, fn, "invalid error handler 0x%x",
           (unsigned)errhandler);
    MPI_Errhandler *slot = f ? &f->errhandler : &s_null_eh;
    fy_errhandler_retain(eh);
    struct fy_errhandler *old = fy_errhandler_get(*slot);
    if (old)
        fy_errhandler_release(old);
    *slot = errhandler;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_File_set_errhandler)

FY_API int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    struct fy_file *f = NULL;
    if (file != MPI_FILE_NULL) {
        f = file_get(file);
        FCHECK(f, NULL, MPI_ERR_FILE, fn, "invalid file handle");
    }
    FCHECK(errhandler, f, MPI_ERR_ARG, fn, "errhandler is NULL");
    MPI_Errhandler h = f ? f->errhandler : s_null_eh;
    struct fy_errhandler *eh = fy_errhandler_get(h);
    if (eh)
        fy_errhandler_retain(eh);
    *errhandler = h;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_File_get_errhandler)

FY_API int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    FY_MT_ENTER();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    struct fy_file *f = NULL;
    if (fh != MPI_FILE_NULL) {
        f = file_get(fh);
        FCHECK(f, NULL, MPI_ERR_FILE, fn, "invalid file handle");
    }
    (void)FERR(f, errorcode, fn, "MPI_File_call_errhandler with code %d",
               errorcode);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_File_call_errhandler)

FY_API MPI_Fint PMPI_File_c2f(MPI_File file)
{
    FY_MT_ENTER();
    struct fy_file *f = file_get(file);
    return f ? (MPI_Fint)f->handle : 0;
}
FY_ALIAS(MPI_File_c2f)

FY_API MPI_File PMPI_File_f2c(MPI_Fint file)
{
    FY_MT_ENTER();
    files_lock();
    MPI_File f = file <= 0 || file > s_nfiles || !s_files[file - 1]
                     ? MPI_FILE_NULL
                     : (MPI_File)s_files[file - 1];
    files_unlock();
    return f;
}
FY_ALIAS(MPI_File_f2c)

/* ---- data access ------------------------------------------------------------
 */

enum pos_kind { POS_AT, POS_INDIV, POS_SHARED, POS_ORDERED };

/* An access in progress: the user's buffer as the view's data stream. */
struct xfer {
    struct fy_dtype *dt;
    MPI_Count count;
    void *ubuf;
    char *stream; /* == ubuf when no copy is needed */
    MPI_Offset nbytes;
    bool owned;
};

static int xfer_begin(struct fy_file *f, struct xfer *x, bool write)
{
    const struct fy_dtype *dt = x->dt;
    if (f->view.external32) {
        MPI_Count n = fy_dtype_external_size(dt, x->count);
        if (n < 0)
            return -EINVAL;
        x->nbytes = n;
        x->stream = malloc((size_t)n + 1);
        if (!x->stream)
            return -ENOMEM;
        x->owned = true;
        if (write) {
            int rc = fy_dtype_pack_external(x->ubuf, x->count, dt, x->stream);
            if (rc) {
                free(x->stream);
                return rc;
            }
        }
        return 0;
    }
    x->nbytes = (MPI_Offset)(x->count * dt->size);
    if (dt->contig || x->nbytes == 0) {
        x->stream = x->ubuf;
        return 0;
    }
    x->stream = malloc((size_t)x->nbytes);
    if (!x->stream)
        return -ENOMEM;
    x->owned = true;
    if (write)
        fy_dtype_pack(x->ubuf, x->count, dt, x->stream);
    return 0;
}

/* Finish: unpack what a read brought; *bytes_out = native bytes moved. */
static int xfer_end(struct fy_file *f, struct xfer *x, bool write,
                    MPI_Offset done, MPI_Count *bytes_out)
{
    int rc = 0;
    MPI_Count bytes = done;
    if (f->view.external32) {
        MPI_Count one = fy_dtype_external_size(x->dt, 1);
        MPI_Count whole = one > 0 ? done / one : 0;
        bytes = whole * x->dt->size;
        if (!write && whole > 0)
            rc = fy_dtype_unpack_external(x->stream, whole, x->dt, x->ubuf);
    } else if (!write && x->owned) {
        fy_dtype_unpack(x->stream, done, x->ubuf, x->count, x->dt);
    }
    if (x->owned)
        free(x->stream);
    *bytes_out = bytes;
    return rc;
}

/* Stream offset where rank's data goes for an ordered access: the shared
 * pointer moves once by everyone's total, ranks in order. */
static int ordered_offset(struct fy_file *f, MPI_Offset n_etypes,
                          MPI_Offset *voff_out)
{
    struct fy_comm *c = f->comm;
    int64_t mine = n_etypes, *all = malloc(sizeof(int64_t) * (size_t)c->size);
    if (!all)
        return -ENOMEM;
    int rc = fy_coll_allgather(&mine, 1, fy_dtype_get(MPI_INT64_T), all, 1,
                               fy_dtype_get(MPI_INT64_T), c, NULL);
    int64_t before = 0, total = 0;
    for (int q = 0; q < c->size; q++) {
        if (q < c->rank)
            before += all[q];
        total += all[q];
    }
    free(all);
    MPI_Offset base = 0;
    if (!rc && c->rank == 0)
        rc = fy_io_shared_fetch_add(f, total, &base);
    int64_t b = base;
    if (!rc)
        rc = fy_coll_bcast(&b, 1, fy_dtype_get(MPI_INT64_T), 0, c, NULL);
    if (!rc)
        *voff_out = (b + before) * f->view.esize;
    return rc;
}

static int file_access(const char *fn, struct fy_file *f, enum pos_kind pk,
                       bool coll, bool write, MPI_Offset offset, void *buf,
                       MPI_Count count, MPI_Datatype datatype,
                       MPI_Count *bytes_out)
{
    FCHECK(count >= 0, f, MPI_ERR_COUNT, fn, "negative count");
    struct fy_dtype *dt = fy_dtype_get(datatype);
    FCHECK(dt && dt->committed, f, MPI_ERR_TYPE, fn,
           "invalid or uncommitted datatype");
    FCHECK(buf || count == 0 || dt->size == 0, f, MPI_ERR_BUFFER, fn,
           "buffer is NULL");
    FCHECK(!write || !(f->amode & MPI_MODE_RDONLY), f, MPI_ERR_READ_ONLY, fn,
           "file opened MPI_MODE_RDONLY");
    FCHECK(write || !(f->amode & MPI_MODE_WRONLY), f, MPI_ERR_ACCESS, fn,
           "file opened MPI_MODE_WRONLY");
    FCHECK(!(f->amode & MPI_MODE_SEQUENTIAL) || pk == POS_SHARED ||
               pk == POS_ORDERED,
           f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
           "file opened MPI_MODE_SEQUENTIAL: shared file pointer only");
    FCHECK(pk != POS_AT || offset >= 0, f, MPI_ERR_ARG, fn, "negative offset");
    FCHECK((pk != POS_SHARED && pk != POS_ORDERED) || f->shared, f,
           MPI_ERR_UNSUPPORTED_OPERATION, fn,
           "no shared file pointer on this file: %s", strerror(-f->shared_err));
    struct xfer x = {.dt = dt, .count = count, .ubuf = buf};
    int rc = xfer_begin(f, &x, write);
    if (rc == -EINVAL)
        return FERR(f, MPI_ERR_TYPE, fn, "type has no external32 form");
    if (rc == -ERANGE)
        return FERR(f, MPI_ERR_CONVERSION, fn,
                    "a value does not fit its external32 size");
    FCHECK(rc == 0, f, MPI_ERR_NO_MEM, fn, "out of memory");
    FCHECK(x.nbytes % f->view.esize == 0, f, MPI_ERR_TYPE, fn,
           "the data is not a whole number of etypes");
    MPI_Offset net = x.nbytes / f->view.esize, voff = 0;
    switch (pk) {
    case POS_AT:
        voff = offset * f->view.esize;
        break;
    case POS_INDIV:
        voff = f->pos * f->view.esize;
        break;
    case POS_SHARED: {
        MPI_Offset old = 0;
        rc = fy_io_shared_fetch_add(f, net, &old);
        voff = old * f->view.esize;
        break;
    }
    case POS_ORDERED:
        rc = ordered_offset(f, net, &voff);
        break;
    }
    MPI_Offset done = 0;
    if (!rc) {
        if (coll)
            rc = write ? fy_io_write_all(f, voff, x.stream, x.nbytes, &done)
                       : fy_io_read_all(f, voff, x.stream, x.nbytes, &done);
        else
            rc = write ? fy_io_write(f, voff, x.stream, x.nbytes, &done)
                       : fy_io_read(f, voff, x.stream, x.nbytes, &done);
    }
    if (!rc && pk == POS_INDIV)
        f->pos += done / f->view.esize;
    MPI_Count bytes = 0;
    int crc = xfer_end(f, &x, write, rc ? 0 : done, &bytes);
    if (rc)
        return FERR(f, io_class(rc), fn, "%s: %s", f->path, strerror(-rc));
    if (crc)
        return FERR(f, MPI_ERR_CONVERSION, fn, "external32 conversion");
    *bytes_out = bytes;
    return MPI_SUCCESS;
}

static int blocking(const char *fn, MPI_File fh, enum pos_kind pk, bool coll,
                    bool write, MPI_Offset offset, const void *buf,
                    MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    FY_CHECK_INIT(fn);
    GET_FILE(f, fh, fn);
    FCHECK(!coll || !f->split_active, f, MPI_ERR_OTHER, fn,
           "a split collective is active on this file");
    MPI_Count bytes = 0;
    int rc = file_access(fn, f, pk, coll, write, offset, (void *)buf, count,
                         datatype, &bytes);
    if (rc == MPI_SUCCESS)
        fy_status_set(status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, bytes,
                      false);
    return rc;
}

/* A request that is complete when it is returned. */
struct done_req {
    struct fy_mreq_ext x;
};

static void done_progress(struct fy_mreq_ext *x)
{
    x->complete = true;
}

static int done_free(struct fy_mreq_ext *x)
{
    free(x);
    return MPI_SUCCESS;
}

static const struct fy_mreq_ext_ops done_ops = {
    .progress = done_progress,
    .free = done_free,
};

static int nonblocking(const char *fn, MPI_File fh, enum pos_kind pk, bool coll,
                       bool write, MPI_Offset offset, const void *buf,
                       MPI_Count count, MPI_Datatype datatype,
                       MPI_Request *request)
{
    FY_CHECK_INIT(fn);
    GET_FILE(f, fh, fn);
    FCHECK(request, f, MPI_ERR_ARG, fn, "request is NULL");
    struct fy_mreq_ext *x = calloc(1, sizeof(*x));
    FCHECK(x, f, MPI_ERR_NO_MEM, fn, "out of memory");
    MPI_Count bytes = 0;
    int rc = file_access(fn, f, pk, coll, write, offset, (void *)buf, count,
                         datatype, &bytes);
    if (rc != MPI_SUCCESS) {
        free(x);
        return rc;
    }
    x->ops = &done_ops;
    x->comm = f->comm;
    x->complete = true;
    x->st_source = MPI_ANY_SOURCE;
    x->st_tag = MPI_ANY_TAG;
    x->st_bytes = bytes;
    if (fy_mreq_ext_register(x, request) != 0) {
        free(x);
        return FERR(f, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    return MPI_SUCCESS;
}

static int split_begin(const char *fn, MPI_File fh, enum pos_kind pk,
                       bool write, MPI_Offset offset, const void *buf,
                       MPI_Count count, MPI_Datatype datatype)
{
    FY_CHECK_INIT(fn);
    GET_FILE(f, fh, fn);
    FCHECK(!f->split_active, f, MPI_ERR_OTHER, fn,
           "a split collective is already active on this file");
    MPI_Count bytes = 0;
    int rc = file_access(fn, f, pk, true, write, offset, (void *)buf, count,
                         datatype, &bytes);
    if (rc != MPI_SUCCESS)
        return rc;
    f->split_active = true;
    f->split_bytes = bytes;
    f->split_buf = buf;
    return MPI_SUCCESS;
}

static int split_end(const char *fn, MPI_File fh, const void *buf,
                     MPI_Status *status)
{
    FY_CHECK_INIT(fn);
    GET_FILE(f, fh, fn);
    FCHECK(f->split_active, f, MPI_ERR_OTHER, fn,
           "no split collective is active on this file");
    (void)buf;
    f->split_active = false;
    fy_status_set(status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS,
                  f->split_bytes, false);
    return MPI_SUCCESS;
}

/* ---- the entry points of every read/write family ---------------------- */

FY_API int PMPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf,
                             int count, MPI_Datatype datatype,
                             MPI_Status *status)
{
    FY_MT_FILE(fh);
    return blocking(__func__, fh, POS_AT, false, false, offset, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_read_at)

FY_API int PMPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf,
                                 int count, MPI_Datatype datatype,
                                 MPI_Status *status)
{
    FY_MT_ENTER();
    return blocking(__func__, fh, POS_AT, true, false, offset, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_read_at_all)

FY_API int PMPI_File_read(MPI_File fh, void *buf, int count,
                          MPI_Datatype datatype, MPI_Status *status)
{
    FY_MT_FILE(fh);
    return blocking(__func__, fh, POS_INDIV, false, false, 0, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_read)

FY_API int PMPI_File_read_all(MPI_File fh, void *buf, int count,
                              MPI_Datatype datatype, MPI_Status *status)
{
    FY_MT_ENTER();
    return blocking(__func__, fh, POS_INDIV, true, false, 0, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_read_all)

FY_API int PMPI_File_read_shared(MPI_File fh, void *buf, int count,
                                 MPI_Datatype datatype, MPI_Status *status)
{
    FY_MT_ENTER();
    return blocking(__func__, fh, POS_SHARED, false, false, 0, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_read_shared)

FY_API int PMPI_File_read_ordered(MPI_File fh, void *buf, int count,
                                  MPI_Datatype datatype, MPI_Status *status)
{
    FY_MT_ENTER();
    return blocking(__func__, fh, POS_ORDERED, true, false, 0, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_read_ordered)

FY_API int PMPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf,
                              int count, MPI_Datatype datatype,
                              MPI_Request *request)
{
    FY_MT_ENTER();
    return nonblocking(__func__, fh, POS_AT, false, false, offset, buf, count,
                       datatype, request);
}
FY_ALIAS(MPI_File_iread_at)

FY_API int PMPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf,
                                  int count, MPI_Datatype datatype,
                                  MPI_Request *request)
{
    FY_MT_ENTER();
    return nonblocking(__func__, fh, POS_AT, true, false, offset, buf, count,
                       datatype, request);
}
FY_ALIAS(MPI_File_iread_at_all)

FY_API int PMPI_File_iread(MPI_File fh, void *buf, int count,
                           MPI_Datatype datatype, MPI_Request *request)
{
    FY_MT_ENTER();
    return nonblocking(__func__, fh, POS_INDIV, false, false, 0, buf, count,
                       datatype, request);
}
FY_ALIAS(MPI_File_iread)

FY_API int PMPI_File_iread_all(MPI_File fh, void *buf, int count,
                               MPI_Datatype datatype, MPI_Request *request)
{
    FY_MT_ENTER();
    return nonblocking(__func__, fh, POS_INDIV, true, false, 0, buf, count,
                       datatype, request);
}
FY_ALIAS(MPI_File_iread_all)

FY_API int PMPI_File_iread_shared(MPI_File fh, void *buf, int count,
                                  MPI_Datatype datatype, MPI_Request *request)
{
    FY_MT_ENTER();
    return nonblocking(__func__, fh, POS_SHARED, false, false, 0, buf, count,
                       datatype, request);
}
FY_ALIAS(MPI_File_iread_shared)

FY_API int PMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset,
                                       void *buf, int count,
                                       MPI_Datatype datatype)
{
    FY_MT_ENTER();
    return split_begin(__func__, fh, POS_AT, false, offset, buf, count,
                       datatype);
}
FY_ALIAS(MPI_File_read_at_all_begin)

FY_API int PMPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    FY_MT_ENTER();
    return split_end(__func__, fh, buf, status);
}
FY_ALIAS(MPI_File_read_at_all_end)

FY_API int PMPI_File_read_all_begin(MPI_File fh, void *buf, int count,
                                    MPI_Datatype datatype)
{
    FY_MT_ENTER();
    return split_begin(__func__, fh, POS_INDIV, false, 0, buf, count, datatype);
}
FY_ALIAS(MPI_File_read_all_begin)

FY_API int PMPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    FY_MT_ENTER();
    return split_end(__func__, fh, buf, status);
}
FY_ALIAS(MPI_File_read_all_end)

FY_API int PMPI_File_read_ordered_begin(MPI_File fh, void *buf, int count,
                                        MPI_Datatype datatype)
{
    FY_MT_ENTER();
    return split_begin(__func__, fh, POS_ORDERED, false, 0, buf, count,
                       datatype);
}
FY_ALIAS(MPI_File_read_ordered_begin)

FY_API int PMPI_File_read_ordered_end(MPI_File fh, void *buf,
                                      MPI_Status *status)
{
    FY_MT_ENTER();
    return split_end(__func__, fh, buf, status);
}
FY_ALIAS(MPI_File_read_ordered_end)

FY_API int PMPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf,
                              int count, MPI_Datatype datatype,
                              MPI_Status *status)
{
    FY_MT_FILE(fh);
    return blocking(__func__, fh, POS_AT, false, true, offset, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_write_at)

FY_API int PMPI_File_write_at_all(MPI_File fh, MPI_Offset offset,
                                  const void *buf, int count,
                                  MPI_Datatype datatype, MPI_Status *status)
{
    FY_MT_ENTER();
    return blocking(__func__, fh, POS_AT, true, true, offset, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_write_at_all)

FY_API int PMPI_File_write(MPI_File fh, const void *buf, int count,
                           MPI_Datatype datatype, MPI_Status *status)
{
    FY_MT_FILE(fh);
    return blocking(__func__, fh, POS_INDIV, false, true, 0, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_write)

FY_API int PMPI_File_write_all(MPI_File fh, const void *buf, int count,
                               MPI_Datatype datatype, MPI_Status *status)
{
    FY_MT_ENTER();
    return blocking(__func__, fh, POS_INDIV, true, true, 0, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_write_all)

FY_API int PMPI_File_write_shared(MPI_File fh, const void *buf, int count,
                                  MPI_Datatype datatype, MPI_Status *status)
{
    FY_MT_ENTER();
    return blocking(__func__, fh, POS_SHARED, false, true, 0, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_write_shared)

FY_API int PMPI_File_write_ordered(MPI_File fh, const void *buf, int count,
                                   MPI_Datatype datatype, MPI_Status *status)
{
    FY_MT_ENTER();
    return blocking(__func__, fh, POS_ORDERED, true, true, 0, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_write_ordered)

FY_API int PMPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf,
                               int count, MPI_Datatype datatype,
                               MPI_Request *request)
{
    FY_MT_ENTER();
    return nonblocking(__func__, fh, POS_AT, false, true, offset, buf, count,
                       datatype, request);
}
FY_ALIAS(MPI_File_iwrite_at)

FY_API int PMPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset,
                                   const void *buf, int count,
                                   MPI_Datatype datatype, MPI_Request *request)
{
    FY_MT_ENTER();
    return nonblocking(__func__, fh, POS_AT, true, true, offset, buf, count,
                       datatype, request);
}
FY_ALIAS(MPI_File_iwrite_at_all)

FY_API int PMPI_File_iwrite(MPI_File fh, const void *buf, int count,
                            MPI_Datatype datatype, MPI_Request *request)
{
    FY_MT_ENTER();
    return nonblocking(__func__, fh, POS_INDIV, false, true, 0, buf, count,
                       datatype, request);
}
FY_ALIAS(MPI_File_iwrite)

FY_API int PMPI_File_iwrite_all(MPI_File fh, const void *buf, int count,
                                MPI_Datatype datatype, MPI_Request *request)
{
    FY_MT_ENTER();
    return nonblocking(__func__, fh, POS_INDIV, true, true, 0, buf, count,
                       datatype, request);
}
FY_ALIAS(MPI_File_iwrite_all)

FY_API int PMPI_File_iwrite_shared(MPI_File fh, const void *buf, int count,
                                   MPI_Datatype datatype, MPI_Request *request)
{
    FY_MT_ENTER();
    return nonblocking(__func__, fh, POS_SHARED, false, true, 0, buf, count,
                       datatype, request);
}
FY_ALIAS(MPI_File_iwrite_shared)

FY_API int PMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset,
                                        const void *buf, int count,
                                        MPI_Datatype datatype)
{
    FY_MT_ENTER();
    return split_begin(__func__, fh, POS_AT, true, offset, buf, count,
                       datatype);
}
FY_ALIAS(MPI_File_write_at_all_begin)

FY_API int PMPI_File_write_at_all_end(MPI_File fh, const void *buf,
                                      MPI_Status *status)
{
    FY_MT_ENTER();
    return split_end(__func__, fh, buf, status);
}
FY_ALIAS(MPI_File_write_at_all_end)

FY_API int PMPI_File_write_all_begin(MPI_File fh, const void *buf, int count,
                                     MPI_Datatype datatype)
{
    FY_MT_ENTER();
    return split_begin(__func__, fh, POS_INDIV, true, 0, buf, count, datatype);
}
FY_ALIAS(MPI_File_write_all_begin)

FY_API int PMPI_File_write_all_end(MPI_File fh, const void *buf,
                                   MPI_Status *status)
{
    FY_MT_ENTER();
    return split_end(__func__, fh, buf, status);
}
FY_ALIAS(MPI_File_write_all_end)

FY_API int PMPI_File_write_ordered_begin(MPI_File fh, const void *buf,
                                         int count, MPI_Datatype datatype)
{
    FY_MT_ENTER();
    return split_begin(__func__, fh, POS_ORDERED, true, 0, buf, count,
                       datatype);
}
FY_ALIAS(MPI_File_write_ordered_begin)

FY_API int PMPI_File_write_ordered_end(MPI_File fh, const void *buf,
                                       MPI_Status *status)
{
    FY_MT_ENTER();
    return split_end(__func__, fh, buf, status);
}
FY_ALIAS(MPI_File_write_ordered_end)

FY_API int PMPI_File_read_at_c(MPI_File fh, MPI_Offset offset, void *buf,
                               MPI_Count count, MPI_Datatype datatype,
                               MPI_Status *status)
{
    FY_MT_FILE(fh);
    return blocking(__func__, fh, POS_AT, false, false, offset, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_read_at_c)

FY_API int PMPI_File_read_at_all_c(MPI_File fh, MPI_Offset offset, void *buf,
                                   MPI_Count count, MPI_Datatype datatype,
                                   MPI_Status *status)
{
    FY_MT_ENTER();
    return blocking(__func__, fh, POS_AT, true, false, offset, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_read_at_all_c)

FY_API int PMPI_File_read_c(MPI_File fh, void *buf, MPI_Count count,
                            MPI_Datatype datatype, MPI_Status *status)
{
    FY_MT_FILE(fh);
    return blocking(__func__, fh, POS_INDIV, false, false, 0, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_read_c)

FY_API int PMPI_File_read_all_c(MPI_File fh, void *buf, MPI_Count count,
                                MPI_Datatype datatype, MPI_Status *status)
{
    FY_MT_ENTER();
    return blocking(__func__, fh, POS_INDIV, true, false, 0, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_read_all_c)

FY_API int PMPI_File_read_shared_c(MPI_File fh, void *buf, MPI_Count count,
                                   MPI_Datatype datatype, MPI_Status *status)
{
    FY_MT_ENTER();
    return blocking(__func__, fh, POS_SHARED, false, false, 0, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_read_shared_c)

FY_API int PMPI_File_read_ordered_c(MPI_File fh, void *buf, MPI_Count count,
                                    MPI_Datatype datatype, MPI_Status *status)
{
    FY_MT_ENTER();
    return blocking(__func__, fh, POS_ORDERED, true, false, 0, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_read_ordered_c)

FY_API int PMPI_File_iread_at_c(MPI_File fh, MPI_Offset offset, void *buf,
                                MPI_Count count, MPI_Datatype datatype,
                                MPI_Request *request)
{
    FY_MT_ENTER();
    return nonblocking(__func__, fh, POS_AT, false, false, offset, buf, count,
                       datatype, request);
}
FY_ALIAS(MPI_File_iread_at_c)

FY_API int PMPI_File_iread_at_all_c(MPI_File fh, MPI_Offset offset, void *buf,
                                    MPI_Count count, MPI_Datatype datatype,
                                    MPI_Request *request)
{
    FY_MT_ENTER();
    return nonblocking(__func__, fh, POS_AT, true, false, offset, buf, count,
                       datatype, request);
}
FY_ALIAS(MPI_File_iread_at_all_c)

FY_API int PMPI_File_iread_c(MPI_File fh, void *buf, MPI_Count count,
                             MPI_Datatype datatype, MPI_Request *request)
{
    FY_MT_ENTER();
    return nonblocking(__func__, fh, POS_INDIV, false, false, 0, buf, count,
                       datatype, request);
}
FY_ALIAS(MPI_File_iread_c)

FY_API int PMPI_File_iread_all_c(MPI_File fh, void *buf, MPI_Count count,
                                 MPI_Datatype datatype, MPI_Request *request)
{
    FY_MT_ENTER();
    return nonblocking(__func__, fh, POS_INDIV, true, false, 0, buf, count,
                       datatype, request);
}
FY_ALIAS(MPI_File_iread_all_c)

FY_API int PMPI_File_iread_shared_c(MPI_File fh, void *buf, MPI_Count count,
                                    MPI_Datatype datatype, MPI_Request *request)
{
    FY_MT_ENTER();
    return nonblocking(__func__, fh, POS_SHARED, false, false, 0, buf, count,
                       datatype, request);
}
FY_ALIAS(MPI_File_iread_shared_c)

FY_API int PMPI_File_read_at_all_begin_c(MPI_File fh, MPI_Offset offset,
                                         void *buf, MPI_Count count,
                                         MPI_Datatype datatype)
{
    FY_MT_ENTER();
    return split_begin(__func__, fh, POS_AT, false, offset, buf, count,
                       datatype);
}
FY_ALIAS(MPI_File_read_at_all_begin_c)

FY_API int PMPI_File_read_all_begin_c(MPI_File fh, void *buf, MPI_Count count,
                                      MPI_Datatype datatype)
{
    FY_MT_ENTER();
    return split_begin(__func__, fh, POS_INDIV, false, 0, buf, count, datatype);
}
FY_ALIAS(MPI_File_read_all_begin_c)

FY_API int PMPI_File_read_ordered_begin_c(MPI_File fh, void *buf,
                                          MPI_Count count,
                                          MPI_Datatype datatype)
{
    FY_MT_ENTER();
    return split_begin(__func__, fh, POS_ORDERED, false, 0, buf, count,
                       datatype);
}
FY_ALIAS(MPI_File_read_ordered_begin_c)

FY_API int PMPI_File_write_at_c(MPI_File fh, MPI_Offset offset, const void *buf,
                                MPI_Count count, MPI_Datatype datatype,
                                MPI_Status *status)
{
    FY_MT_FILE(fh);
    return blocking(__func__, fh, POS_AT, false, true, offset, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_write_at_c)

FY_API int PMPI_File_write_at_all_c(MPI_File fh, MPI_Offset offset,
                                    const void *buf, MPI_Count count,
                                    MPI_Datatype datatype, MPI_Status *status)
{
    FY_MT_ENTER();
    return blocking(__func__, fh, POS_AT, true, true, offset, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_write_at_all_c)

FY_API int PMPI_File_write_c(MPI_File fh, const void *buf, MPI_Count count,
                             MPI_Datatype datatype, MPI_Status *status)
{
    FY_MT_FILE(fh);
    return blocking(__func__, fh, POS_INDIV, false, true, 0, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_write_c)

FY_API int PMPI_File_write_all_c(MPI_File fh, const void *buf, MPI_Count count,
                                 MPI_Datatype datatype, MPI_Status *status)
{
    FY_MT_ENTER();
    return blocking(__func__, fh, POS_INDIV, true, true, 0, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_write_all_c)

FY_API int PMPI_File_write_shared_c(MPI_File fh, const void *buf,
                                    MPI_Count count, MPI_Datatype datatype,
                                    MPI_Status *status)
{
    FY_MT_ENTER();
    return blocking(__func__, fh, POS_SHARED, false, true, 0, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_write_shared_c)

FY_API int PMPI_File_write_ordered_c(MPI_File fh, const void *buf,
                                     MPI_Count count, MPI_Datatype datatype,
                                     MPI_Status *status)
{
    FY_MT_ENTER();
    return blocking(__func__, fh, POS_ORDERED, true, true, 0, buf, count,
                    datatype, status);
}
FY_ALIAS(MPI_File_write_ordered_c)

FY_API int PMPI_File_iwrite_at_c(MPI_File fh, MPI_Offset offset,
                                 const void *buf, MPI_Count count,
                                 MPI_Datatype datatype, MPI_Request *request)
{
    FY_MT_ENTER();
    return nonblocking(__func__, fh, POS_AT, false, true, offset, buf, count,
                       datatype, request);
}
FY_ALIAS(MPI_File_iwrite_at_c)

FY_API int PMPI_File_iwrite_at_all_c(MPI_File fh, MPI_Offset offset,
                                     const void *buf, MPI_Count count,
                                     MPI_Datatype datatype,
                                     MPI_Request *request)
{
    FY_MT_ENTER();
    return nonblocking(__func__, fh, POS_AT, true, true, offset, buf, count,
                       datatype, request);
}
FY_ALIAS(MPI_File_iwrite_at_all_c)

FY_API int PMPI_File_iwrite_c(MPI_File fh, const void *buf, MPI_Count count,
                              MPI_Datatype datatype, MPI_Request *request)
{
    FY_MT_ENTER();
    return nonblocking(__func__, fh, POS_INDIV, false, true, 0, buf, count,
                       datatype, request);
}
FY_ALIAS(MPI_File_iwrite_c)

FY_API int PMPI_File_iwrite_all_c(MPI_File fh, const void *buf, MPI_Count count,
                                  MPI_Datatype datatype, MPI_Request *request)
{
    FY_MT_ENTER();
    return nonblocking(__func__, fh, POS_INDIV, true, true, 0, buf, count,
                       datatype, request);
}
FY_ALIAS(MPI_File_iwrite_all_c)

FY_API int PMPI_File_iwrite_shared_c(MPI_File fh, const void *buf,
                                     MPI_Count count, MPI_Datatype datatype,
                                     MPI_Request *request)
{
    FY_MT_ENTER();
    return nonblocking(__func__, fh, POS_SHARED, false, true, 0, buf, count,
                       datatype, request);
}
FY_ALIAS(MPI_File_iwrite_shared_c)

FY_API int PMPI_File_write_at_all_begin_c(MPI_File fh, MPI_Offset offset,
                                          const void *buf, MPI_Count count,
                                          MPI_Datatype datatype)
{
    FY_MT_ENTER();
    return split_begin(__func__, fh, POS_AT, true, offset, buf, count,
                       datatype);
}
FY_ALIAS(MPI_File_write_at_all_begin_c)

FY_API int PMPI_File_write_all_begin_c(MPI_File fh, const void *buf,
                                       MPI_Count count, MPI_Datatype datatype)
{
    FY_MT_ENTER();
    return split_begin(__func__, fh, POS_INDIV, true, 0, buf, count, datatype);
}
FY_ALIAS(MPI_File_write_all_begin_c)

FY_API int PMPI_File_write_ordered_begin_c(MPI_File fh, const void *buf,
                                           MPI_Count count,
                                           MPI_Datatype datatype)
{
    FY_MT_ENTER();
    return split_begin(__func__, fh, POS_ORDERED, true, 0, buf, count,
                       datatype);
}
FY_ALIAS(MPI_File_write_ordered_begin_c)
