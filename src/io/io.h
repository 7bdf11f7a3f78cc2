/* SPDX-License-Identifier: MIT */
/* MPI-IO engine: open files, views (a filetype flattened into byte blocks),
 * independent access with pread/pwrite, two-phase collective access through
 * aggregator ranks, the shared file pointer and byte-range locks for atomic
 * mode. Functions return 0 or a negative errno; src/mpi/file.c maps them to
 * MPI error classes. Single-threaded like the rest of the MPI layer. */
#ifndef FY_IO_H
#define FY_IO_H

#include <mpi.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "comm/comm.h"
#include "dtype/dtype.h"

/* One contiguous run of a filetype: 'len' bytes at 'off' from the start of
 * the filetype's copy; 'pre' = data bytes of the runs before it. */
struct fy_io_block {
    MPI_Offset off;
    MPI_Offset len;
    MPI_Offset pre;
};

/* Where data goes: the view. The data stream of the view is the sequence of
 * bytes the filetype selects, copies tiled every 'ft_extent' bytes from
 * 'disp'. Positions visible to the user are in etypes of that stream. */
struct fy_io_view {
    MPI_Offset disp;
    struct fy_dtype *etype, *ftype; /* referenced */
    MPI_Offset esize;               /* etype size (bytes, > 0) */
    MPI_Offset ft_size, ft_extent;  /* filetype data bytes and extent */
    int nblocks;
    struct fy_io_block *blocks; /* one filetype copy, merged, in map order */
    bool external32;            /* data converted by fy_dtype_*_external */
    char datarep[MPI_MAX_DATAREP_STRING];
};

/* The shared file pointer: one page of a memfd made by rank 0 of the file's
 * communicator, mapped by every member (opened through /proc/<pid>/fd, the
 * same way as RMA windows). Anonymous, so nothing is ever left in /dev/shm
 * or next to the data file, even after kill -9.
 * Invariants: 'magic' is written once by rank 0 before the memfd is
 * published (by a collective, which orders it); 'pos' is only changed by
 * atomic read-modify-write (seq_cst; any member, any time). */
struct fy_io_shared {
    uint64_t magic;
    alignas(64) _Atomic int64_t pos; /* shared pointer, in etypes */
};
#define FY_IO_SHARED_MAGIC UINT64_C(0x6665727279696f31) /* "ferryio1" */

struct fy_file {
    int fd;
    int amode;
    struct fy_comm *comm; /* a private duplicate of the user's */
    char *path;
    struct fy_info *info; /* hints given (owned), or NULL */
    MPI_Errhandler errhandler;
    bool atomic;
    struct fy_io_view view;
    MPI_Offset pos;              /* individual file pointer, in etypes */
    struct fy_io_shared *shared; /* NULL if it could not be mapped */
    int shared_err;              /* why not (negative errno) */
    int cb_nodes;                /* aggregators for collective access */
    MPI_Offset cb_buffer_size;   /* bytes an aggregator moves per round */
    bool cb_write, cb_read;      /* two-phase enabled */
    /* A split collective begun and not yet ended. */
    bool split_active;
    int split_err;
    MPI_Count split_bytes;
    const void *split_buf;
    int handle; /* Fortran index (MPI_File_c2f) */
};

/* An access: 'nbytes' bytes of the view's data stream from stream byte
 * 'voff', to or from 'buf' (contiguous, already converted). */

/* Open 'path' with MPI amode on communicator c (collective). Rank 0
 * creates the file when asked; every rank opens it. Returns 0, -EINVAL
 * (bad amode), or an open(2) errno agreed across ranks. */
int fy_io_open(struct fy_comm *c, const char *path, int amode,
               struct fy_file **out);
/* Close (collective): unmaps the shared pointer, deletes the file if
 * MPI_MODE_DELETE_ON_CLOSE (rank 0, after everyone closed). */
int fy_io_close(struct fy_file *f);

/* Install a view (etype/filetype referenced); resets both pointers. */
int fy_io_set_view(struct fy_file *f, MPI_Offset disp, struct fy_dtype *et,
                   struct fy_dtype *ft, const char *datarep);

/* Absolute file byte of view stream byte v. */
MPI_Offset fy_io_byte_offset(const struct fy_file *f, MPI_Offset v);

/* Independent access: returns 0 or -errno; *done_out = bytes moved (a
 * read stops at end of file). */
int fy_io_read(struct fy_file *f, MPI_Offset voff, void *buf, MPI_Offset nbytes,
               MPI_Offset *done_out);
int fy_io_write(struct fy_file *f, MPI_Offset voff, const void *buf,
                MPI_Offset nbytes, MPI_Offset *done_out);
/* Collective access (every member of f->comm calls it; nbytes may be 0):
 * two-phase through f->cb_nodes aggregators. */
int fy_io_read_all(struct fy_file *f, MPI_Offset voff, void *buf,
                   MPI_Offset nbytes, MPI_Offset *done_out);
int fy_io_write_all(struct fy_file *f, MPI_Offset voff, const void *buf,
                    MPI_Offset nbytes, MPI_Offset *done_out);

/* Shared pointer: add 'n' etypes, returning the old value. */
int fy_io_shared_fetch_add(struct fy_file *f, MPI_Offset n,
                           MPI_Offset *old_out);
int fy_io_shared_set(struct fy_file *f, MPI_Offset v);

/* Agree on the worst error (most negative) among f->comm's members. */
int fy_io_agree(struct fy_comm *c, int err);

/* ---- shared by file.c and coll.c ---------------------------------------- */

/* A contiguous file range an access touches. */
struct fy_io_piece {
    MPI_Offset off, len;
};
/* The file ranges of stream bytes [voff, voff + n), in stream order (file
 * order too: MPI requires a filetype's displacements to be monotonically
 * nondecreasing), adjacent ranges merged. *out is malloc'd (caller frees).
 * -EIO when n > 0 but the view's filetype holds no data. */
int fy_io_pieces(const struct fy_file *f, MPI_Offset voff, MPI_Offset n,
                 struct fy_io_piece **out, int *n_out);
/* fcntl byte-range lock (F_RDLCK, F_WRLCK, F_UNLCK), waiting. */
int fy_io_lock(struct fy_file *f, short type, MPI_Offset off, MPI_Offset len);
/* pwrite/pread until done (a read stops at end of file: *got_out). */
int fy_io_pwrite_full(int fd, const void *buf, MPI_Offset len, MPI_Offset off);
int fy_io_pread_full(int fd, void *buf, MPI_Offset len, MPI_Offset off,
                     MPI_Offset *got_out);
void fy_io_view_clear(struct fy_io_view *v);
/* Whether t may be an etype or filetype (MPI 4.0 14.3): 0, or -EINVAL for
 * a negative displacement in its type map, -EDOM for a decreasing one,
 * -EEXIST for overlapping data when no_overlap (a file open for writing). */
int fy_io_view_type_check(const struct fy_dtype *t, bool no_overlap);

#endif /* FY_IO_H */
