/* SPDX-License-Identifier: MIT */
/* MPI-IO files: open/close, views flattened into byte blocks, the mapping
 * from the view's data stream to file offsets, independent pread/pwrite
 * access (with fcntl byte-range locks in atomic mode) and the shared file
 * pointer in a memfd the file's ranks share. */
#define _GNU_SOURCE
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coll/coll.h"
#include "util/util.h"

int fy_io_agree(struct fy_comm *c, int err)
{
    int e = -err, worst = 0;
    int rc = fy_coll_allreduce(&e, &worst, 1, fy_dtype_get(MPI_INT),
                               fy_op_get(MPI_MAX), c, NULL);
    return rc ? rc : -worst;
}

/* ---- the shared file pointer ------------------------------------------
 * Why a memfd and not a lock file next to the data: a killed job leaves
 * nothing behind (the memory goes with the last process holding it), it
 * works on file systems without fcntl locks, and a fetch-and-add on a
 * mapped word is far cheaper than lock + read + write + unlock. The cost:
 * the other ranks must be allowed to open rank 0's descriptor through
 * /proc (same user, no ptrace restriction), as for RMA windows. Where they
 * are not, the file still opens and only the shared-pointer calls fail. */

struct shared_info {
    int32_t pid, fd, err;
};

static int shared_map(struct fy_file *f)
{
    struct shared_info si = {.pid = (int32_t)getpid(), .fd = -1, .err = 0};
    size_t len = (size_t)sysconf(_SC_PAGESIZE);
    int fd = -1;
    if (f->comm->rank == 0) {
        fd = memfd_create("ferry-io-sfp", MFD_CLOEXEC);
        if (fd < 0 || ftruncate(fd, (off_t)len) != 0) {
            si.err = -errno;
            FY_ERROR("MPI_File_open: memfd for the shared file pointer: %m");
        }
        si.fd = fd;
    }
    int rc = fy_coll_bcast(&si, sizeof(si), fy_dtype_get(MPI_BYTE), 0, f->comm,
                           NULL);
    if (rc)
        goto close_fd;
    int err = si.err;
    if (!err && f->comm->rank != 0) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)si.pid, (int)si.fd);
        fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            err = -errno;
            FY_ERROR("MPI_File_open: cannot open rank 0's shared file "
                     "pointer %s: %m (shared-pointer calls will fail)",
                     path);
        }
    }
    void *p = MAP_FAILED;
    if (!err) {
        p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
            err = -errno;
    }
    if (!err && f->comm->rank == 0) {
        struct fy_io_shared *s = p;
        s->magic = FY_IO_SHARED_MAGIC;
        atomic_store(&s->pos, 0);
    }
    /* Every member holds the memfd (or failed) before rank 0 closes its
     * descriptor; the collective also orders rank 0's initialisation
     * before anyone's first access. */
    rc = fy_io_agree(f->comm, err);
    if (rc == 0) {
        f->shared = p;
        if (f->shared->magic != FY_IO_SHARED_MAGIC) {
            FY_ERROR("MPI_File_open: shared file pointer page has a bad "
                     "magic word");
            f->shared = NULL;
            rc = -EPROTO;
        }
    } else if (p != MAP_FAILED) {
        munmap(p, len);
    }
close_fd:
    if (fd >= 0)
        close(fd);
    if (!f->shared)
        f->shared_err = rc ? rc : -ENOTSUP;
    return 0; /* the file works without it */
}

int fy_io_shared_fetch_add(struct fy_file *f, MPI_Offset n, MPI_Offset *old_out)
{
    if (!f->shared)
        return f->shared_err;
    *old_out = atomic_fetch_add(&f->shared->pos, (int64_t)n);
    return 0;
}

int fy_io_shared_set(struct fy_file *f, MPI_Offset v)
{
    if (!f->shared)
        return f->shared_err;
    atomic_store(&f->shared->pos, (int64_t)v);
    return 0;
}

/* ---- open and close --------------------------------------------------- */

static int os_flags(int amode)
{
    /* Write-only files are opened read-write when allowed: collective
     * writes read the holes between pieces (read-modify-write). */
    if (amode & MPI_MODE_RDONLY)
        return O_RDONLY;
    return O_RDWR;
}

int fy_io_open(struct fy_comm *c, const char *path, int amode,
               struct fy_file **out)
{
    struct fy_file *f = calloc(1, sizeof(*f));
    if (!f)
        return -ENOMEM;
    f->fd = -1;
    f->amode = amode;
    f->cb_nodes = 1; /* one aggregator per node; Ferry runs on one node */
    f->cb_buffer_size = 16 << 20;
    f->cb_write = f->cb_read = true;
    f->path = strdup(path);
    int rc = f->path ? fy_comm_dup(c, &f->comm) : -ENOMEM;
    if (rc > 0)
        rc = -EINVAL; /* an attribute copy callback failed */
    if (rc) {
        free(f->path);
        free(f);
        return rc;
    }

    /* Rank 0 creates (and checks MPI_MODE_EXCL) before anyone else opens:
     * O_EXCL must fail for the others once it has succeeded for rank 0. */
    int err = 0;
    int flags = os_flags(amode) | O_CLOEXEC;
    if (f->comm->rank == 0) {
        int cflags = flags;
        if (amode & MPI_MODE_CREATE)
            cflags |= O_CREAT;
        if (amode & MPI_MODE_EXCL)
            cflags |= O_EXCL;
        f->fd = open(path, cflags, 0666);
        if (f->fd < 0 && errno == EACCES && (amode & MPI_MODE_WRONLY))
            f->fd = open(path, (cflags & ~O_RDWR) | O_WRONLY, 0666);
        if (f->fd < 0)
            err = -errno;
    }
    rc = fy_coll_bcast(&err, 1, fy_dtype_get(MPI_INT), 0, f->comm, NULL);
    if (!rc && !err && f->comm->rank != 0) {
        f->fd = open(path, flags);
        if (f->fd < 0 && errno == EACCES && (amode & MPI_MODE_WRONLY))
            f->fd = open(path, O_WRONLY | O_CLOEXEC);
        if (f->fd < 0)
            err = -errno;
    }
    if (!rc)
        rc = fy_io_agree(f->comm, err);
    if (!rc) {
        struct stat st;
        if (fstat(f->fd, &st) == 0 && S_ISDIR(st.st_mode))
            err = -EISDIR;
        rc = fy_io_agree(f->comm, err);
    }
    if (!rc)
        rc = fy_io_set_view(f, 0, fy_dtype_get(MPI_BYTE),
                            fy_dtype_get(MPI_BYTE), "native");
    if (!rc)
        rc = shared_map(f);
    if (!rc && (amode & MPI_MODE_APPEND)) {
        struct stat st;
        MPI_Offset end = fstat(f->fd, &st) == 0 ? (MPI_Offset)st.st_size : 0;
        f->pos = end;
        if (f->shared && f->comm->rank == 0)
            atomic_store(&f->shared->pos, (int64_t)end);
        rc = fy_coll_barrier(f->comm, NULL);
    }
    if (rc) {
        if (f->fd >= 0)
            close(f->fd);
        if (f->shared)
            munmap(f->shared, (size_t)sysconf(_SC_PAGESIZE));
        fy_io_view_clear(&f->view);
        fy_comm_free(f->comm);
        free(f->path);
        free(f);
        return rc;
    }
    *out = f;
    return 0;
}

int fy_io_close(struct fy_file *f)
{
    int err = 0;
    if (close(f->fd) != 0)
        err = -errno;
    if (f->shared)
        munmap(f->shared, (size_t)sysconf(_SC_PAGESIZE));
    /* Everyone has closed before rank 0 deletes, and the file is gone
     * before anyone returns. */
    int rc = fy_io_agree(f->comm, err);
    if (!rc && (f->amode & MPI_MODE_DELETE_ON_CLOSE)) {
        err = 0;
        if (f->comm->rank == 0 && unlink(f->path) != 0)
            err = -errno;
        rc = fy_io_agree(f->comm, err);
    }
    fy_io_view_clear(&f->view);
    fy_comm_free(f->comm);
    free(f->path);
    free(f);
    return rc;
}

/* ---- views ------------------------------------------------------------ */

void fy_io_view_clear(struct fy_io_view *v)
{
    if (v->etype)
        fy_dtype_release(v->etype);
    if (v->ftype)
        fy_dtype_release(v->ftype);
    free(v->blocks);
    memset(v, 0, sizeof(*v));
}

/* The data segments of one copy of a type, in type map order (every
 * repetition's segments in turn), empty ones skipped. */
struct seg_walk {
    const struct fy_dtype *t;
    MPI_Count r;
    uint32_t i;
};

static bool seg_next(struct seg_walk *w, MPI_Offset *off, MPI_Offset *len)
{
    const struct fy_dtype *t = w->t;
    while (w->r < t->rep) {
        if (w->i == t->nsegs) {
            w->i = 0;
            w->r++;
            continue;
        }
        const struct fy_dtype_seg *s = &t->segs[w->i++];
        *len = (MPI_Offset)s->count * (MPI_Offset)fy_basic_size(s->basic);
        if (*len == 0)
            continue;
        *off = s->disp + (MPI_Offset)w->r * t->rep_stride;
        return true;
    }
    return false;
}

/* Flatten one copy of 'ft' into merged byte blocks, in type map order. */
static int flatten(const struct fy_dtype *ft, struct fy_io_block **out,
                   int *n_out)
{
    MPI_Count total = (MPI_Count)ft->nsegs * ft->rep;
    if (total > INT32_MAX)
        return -EOVERFLOW;
    struct fy_io_block *b = malloc(sizeof(*b) * (size_t)(total ? total : 1));
    if (!b)
        return -ENOMEM;
    int n = 0;
    MPI_Offset pre = 0, off, len;
    struct seg_walk w = {.t = ft};
    while (seg_next(&w, &off, &len)) {
        if (n > 0 && b[n - 1].off + b[n - 1].len == off)
            b[n - 1].len += len;
        else
            b[n++] = (struct fy_io_block){off, len, pre};
        pre += len;
    }
    *out = b;
    *n_out = n;
    return 0;
}

int fy_io_view_type_check(const struct fy_dtype *t, bool no_overlap)
{
    MPI_Offset prev = 0, end = 0, off, len;
    struct seg_walk w = {.t = t};
    while (seg_next(&w, &off, &len)) {
        if (off < 0)
            return -EINVAL;
        if (off < prev)
            return -EDOM;
        if (no_overlap && off < end)
            return -EEXIST;
        prev = off;
        if (off + len > end)
            end = off + len;
    }
    return 0;
}

int fy_io_set_view(struct fy_file *f, MPI_Offset disp, struct fy_dtype *et,
                   struct fy_dtype *ft, const char *datarep)
{
    struct fy_io_view v = {0};
    /* A filetype without data is allowed: a process that takes no part
     * in a collective access still sets the view with everyone else. */
    if (et->size == 0 || ft->size % et->size != 0)
        return -EINVAL;
    int rc = flatten(ft, &v.blocks, &v.nblocks);
    if (rc)
        return rc;
    v.disp = disp;
    v.esize = et->size;
    v.ft_size = ft->size;
    v.ft_extent = ft->extent;
    v.external32 = strcmp(datarep, "external32") == 0;
    snprintf(v.datarep, sizeof(v.datarep), "%s", datarep);
    fy_dtype_retain(et);
    fy_dtype_retain(ft);
    v.etype = et;
    v.ftype = ft;
    fy_io_view_clear(&f->view);
    f->view = v;
    f->pos = 0;
    if (f->shared && f->comm->rank == 0)
        atomic_store(&f->shared->pos, 0);
    return 0;
}

/* The block of one filetype copy holding data byte w (0 <= w < ft_size). */
static int find_block(const struct fy_io_view *v, MPI_Offset w)
{
    int lo = 0, hi = v->nblocks - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (v->blocks[mid].pre <= w)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

MPI_Offset fy_io_byte_offset(const struct fy_file *f, MPI_Offset vo)
{
    const struct fy_io_view *v = &f->view;
    if (v->ft_size == 0)
        return v->disp; /* an empty view: every position is its start */
    MPI_Offset inst = vo / v->ft_size, w = vo % v->ft_size;
    const struct fy_io_block *b = &v->blocks[find_block(v, w)];
    return v->disp + inst * v->ft_extent + b->off + (w - b->pre);
}

int fy_io_pieces(const struct fy_file *f, MPI_Offset voff, MPI_Offset n,
                 struct fy_io_piece **out, int *n_out)
{
    const struct fy_io_view *v = &f->view;
    int cap = 16, np = 0;
    struct fy_io_piece *p = malloc(sizeof(*p) * (size_t)cap);
    if (!p)
        return -ENOMEM;
    if (n > 0 && v->ft_size == 0) {
        /* Data to place but a view that selects no byte of the file. */
        free(p);
        return -EIO;
    }
    if (n == 0) {
        *out = p;
        *n_out = 0;
        return 0;
    }
    if (v->nblocks == 1 && v->blocks[0].len == v->ft_extent) {
        /* A contiguous filetype: the stream is the file from disp on. */
        p[0] = (struct fy_io_piece){fy_io_byte_offset(f, voff), n};
        *out = p;
        *n_out = 1;
        return 0;
    }
    MPI_Offset inst = voff / v->ft_size, w = voff % v->ft_size;
    int i = find_block(v, w);
    MPI_Offset in_blk = w - v->blocks[i].pre;
    while (n > 0) {
        const struct fy_io_block *b = &v->blocks[i];
        MPI_Offset len = b->len - in_blk;
        if (len > n)
            len = n;
        MPI_Offset off = v->disp + inst * v->ft_extent + b->off + in_blk;
        if (np > 0 && p[np - 1].off + p[np - 1].len == off) {
            p[np - 1].len += len;
        } else {
            if (np == cap) {
                cap *= 2;
                struct fy_io_piece *q = realloc(p, sizeof(*p) * (size_t)cap);
                if (!q) {
                    free(p);
                    return -ENOMEM;
                }
                p = q;
            }
            p[np++] = (struct fy_io_piece){off, len};
        }
        n -= len;
        in_blk = 0;
        if (++i == v->nblocks) {
            i = 0;
            inst++;
        }
    }
    *out = p;
    *n_out = np;
    return 0;
}

/* ---- locks and raw access --------------------------------------------- */

int fy_io_lock(struct fy_file *f, short type, MPI_Offset off, MPI_Offset len)
{
    struct flock fl = {.l_type = type,
                       .l_whence = SEEK_SET,
                       .l_start = (off_t)off,
                       .l_len = (off_t)len};
    while (fcntl(f->fd, F_SETLKW, &fl) != 0) {
        if (errno != EINTR) {
            int e = -errno;
            FY_ERROR("MPI-IO: fcntl lock of %s [%lld, +%lld): %m", f->path,
                     (long long)off, (long long)len);
            return e;
        }
    }
    return 0;
}

int fy_io_pwrite_full(int fd, const void *buf, MPI_Offset len, MPI_Offset off)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = pwrite(fd, p, (size_t)len, (off_t)off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += w;
        len -= w;
        off += w;
    }
    return 0;
}

int fy_io_pread_full(int fd, void *buf, MPI_Offset len, MPI_Offset off,
                     MPI_Offset *got_out)
{
    char *p = buf;
    MPI_Offset got = 0;
    while (got < len) {
        ssize_t r = pread(fd, p + got, (size_t)(len - got), (off_t)(off + got));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (r == 0)
            break; /* end of file */
        got += r;
    }
    *got_out = got;
    return 0;
}

static int access_indep(struct fy_file *f, MPI_Offset voff, void *buf,
                        MPI_Offset nbytes, bool write, MPI_Offset *done_out)
{
    *done_out = 0;
    if (nbytes == 0)
        return 0;
    struct fy_io_piece *p;
    int np;
    int rc = fy_io_pieces(f, voff, nbytes, &p, &np);
    if (rc)
        return rc;
    MPI_Offset lo = p[0].off, hi = p[np - 1].off + p[np - 1].len;
    if (f->atomic) {
        rc = fy_io_lock(f, write ? F_WRLCK : F_RDLCK, lo, hi - lo);
        if (rc)
            goto free_pieces;
    }
    MPI_Offset done = 0;
    for (int i = 0; i < np && !rc; i++) {
        char *b = (char *)buf + done;
        if (write) {
            rc = fy_io_pwrite_full(f->fd, b, p[i].len, p[i].off);
            if (!rc)
                done += p[i].len;
        } else {
            MPI_Offset got;
            rc = fy_io_pread_full(f->fd, b, p[i].len, p[i].off, &got);
            done += rc ? 0 : got;
            if (!rc && got < p[i].len)
                break;
        }
    }
    if (f->atomic)
        fy_io_lock(f, F_UNLCK, lo, hi - lo);
    *done_out = done;
free_pieces:
    free(p);
    return rc;
}

int fy_io_read(struct fy_file *f, MPI_Offset voff, void *buf, MPI_Offset nbytes,
               MPI_Offset *done_out)
{
    return access_indep(f, voff, buf, nbytes, false, done_out);
}

int fy_io_write(struct fy_file *f, MPI_Offset voff, const void *buf,
                MPI_Offset nbytes, MPI_Offset *done_out)
{
    return access_indep(f, voff, (void *)buf, nbytes, true, done_out);
}
