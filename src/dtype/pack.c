/* SPDX-License-Identifier: MIT */
/* Moving data between a typed buffer and its packed form by walking the
 * type map: whole messages, byte ranges of them (for protocols that move a
 * message in pieces), scatter/gather lists, and element counts of partial
 * messages. Contiguous types take one memcpy. */
#include <string.h>
#include <sys/uio.h>

#include "dtype/dtype.h"
#include "dtype/dtype_int.h"
#include "util/copy.h"
#include "util/util.h"

/* Small fixed sizes become plain loads and stores. */
static inline void copy_bytes(char *dst, const char *src, size_t n)
{
    switch (n) {
    case 1:
        memcpy(dst, src, 1);
        break;
    case 2:
        memcpy(dst, src, 2);
        break;
    case 4:
        memcpy(dst, src, 4);
        break;
    case 8:
        memcpy(dst, src, 8);
        break;
    case 16:
        memcpy(dst, src, 16);
        break;
    default:
        fy_copy(dst, src, n);
        break;
    }
}

static inline MPI_Count seg_bytes(const struct fy_dtype_seg *g)
{
    return g->count * (MPI_Count)fy_basic_tab[g->basic].size;
}

void fy_dtype_pack(const void *inbuf, MPI_Count count,
                   const struct fy_dtype *dt, void *out)
{
    if (count <= 0 || dt->size == 0)
        return;
    if (dt->contig) {
        fy_copy(out, inbuf, (size_t)(count * dt->size));
        return;
    }
    const char *in = inbuf;
    char *o = out;
    for (MPI_Count i = 0; i < count; i++) {
        const char *base = in + (MPI_Aint)i * dt->extent;
        for (MPI_Count r = 0; r < dt->rep; r++) {
            const char *rb = base + (MPI_Aint)r * dt->rep_stride;
            for (uint32_t s = 0; s < dt->nsegs; s++) {
                size_t n = (size_t)seg_bytes(&dt->segs[s]);
                copy_bytes(o, rb + dt->segs[s].disp, n);
                o += n;
            }
        }
    }
}

/* Visit the buffer pieces holding packed bytes [off, off + len) of a
 * message of dt: fn(arg, buffer offset, bytes) in packed order; a nonzero
 * return stops the walk. The range must lie inside the message. */
typedef int (*piece_fn)(void *arg, MPI_Aint boff, MPI_Count n);

static void walk_range(const struct fy_dtype *dt, MPI_Count off, MPI_Count len,
                       piece_fn fn, void *arg)
{
    if (len <= 0 || dt->size == 0)
        return;
    if (dt->contig) {
        fn(arg, (MPI_Aint)off, len);
        return;
    }
    MPI_Count rep_size = dt->size / dt->rep;
    MPI_Count i = off / dt->size;
    MPI_Count rem = off % dt->size;
    MPI_Count r = rem / rep_size;
    rem %= rep_size;
    uint32_t s = 0;
    while (rem >= seg_bytes(&dt->segs[s])) {
        rem -= seg_bytes(&dt->segs[s]);
        s++;
    }
    while (len > 0) {
        const struct fy_dtype_seg *g = &dt->segs[s];
        MPI_Count n = FY_MIN(seg_bytes(g) - rem, len);
        MPI_Aint boff = (MPI_Aint)i * dt->extent +
                        (MPI_Aint)r * dt->rep_stride + g->disp + (MPI_Aint)rem;
        if (fn(arg, boff, n))
            return;
        len -= n;
        rem = 0;
        if (++s == dt->nsegs) {
            s = 0;
            if (++r == dt->rep) {
                r = 0;
                i++;
            }
        }
    }
}

struct copy_ctx {
    char *buf;    /* the typed buffer */
    char *packed; /* next packed byte */
};

static int piece_pack(void *arg, MPI_Aint boff, MPI_Count n)
{
    struct copy_ctx *c = arg;
    fy_copy(c->packed, c->buf + boff, (size_t)n);
    c->packed += n;
    return 0;
}

static int piece_unpack(void *arg, MPI_Aint boff, MPI_Count n)
{
    struct copy_ctx *c = arg;
    fy_copy(c->buf + boff, c->packed, (size_t)n);
    c->packed += n;
    return 0;
}

void fy_dtype_pack_range(const void *buf, MPI_Count count,
                         const struct fy_dtype *dt, MPI_Count offset,
                         MPI_Count len, void *packed)
{
    (void)count;
    struct copy_ctx c = {(char *)buf, packed};
    walk_range(dt, offset, len, piece_pack, &c);
}

void fy_dtype_unpack_range(const void *packed, MPI_Count offset, MPI_Count len,
                           void *buf, MPI_Count count,
                           const struct fy_dtype *dt)
{
    (void)count;
    struct copy_ctx c = {buf, (char *)packed};
    walk_range(dt, offset, len, piece_unpack, &c);
}

void fy_dtype_unpack(const void *in, MPI_Count bytes, void *outbuf,
                     MPI_Count count, const struct fy_dtype *dt)
{
    if (count <= 0 || dt->size == 0 || bytes <= 0)
        return;
    /* Never more than the receive buffer holds, whatever arrived. */
    MPI_Count cap = count * dt->size;
    if (bytes > cap)
        bytes = cap;
    if (dt->contig) {
        fy_copy(outbuf, in, (size_t)bytes);
        return;
    }
    const char *p = in;
    char *out = outbuf;
    MPI_Count full = bytes / dt->size;
    for (MPI_Count i = 0; i < full; i++) {
        char *base = out + (MPI_Aint)i * dt->extent;
        for (MPI_Count r = 0; r < dt->rep; r++) {
            char *rb = base + (MPI_Aint)r * dt->rep_stride;
            for (uint32_t s = 0; s < dt->nsegs; s++) {
                size_t n = (size_t)seg_bytes(&dt->segs[s]);
                copy_bytes(rb + dt->segs[s].disp, p, n);
                p += n;
            }
        }
    }
    MPI_Count rest = bytes - full * dt->size;
    if (rest > 0) {
        struct copy_ctx c = {outbuf, (char *)p};
        walk_range(dt, full * dt->size, rest, piece_unpack, &c);
    }
}

MPI_Count fy_dtype_elements(const struct fy_dtype *dt, MPI_Count bytes)
{
    if (bytes <= 0)
        return 0;
    if (dt->size == 0)
        return -1; /* data cannot be made of elements that hold none */
    MPI_Count n = (bytes / dt->size) * dt->nbasic;
    MPI_Count rem = bytes % dt->size;
    if (rem == 0)
        return n;
    MPI_Count rep_size = dt->size / dt->rep;
    n += (rem / rep_size) * (dt->nbasic / dt->rep);
    rem %= rep_size;
    for (uint32_t s = 0; s < dt->nsegs && rem > 0; s++) {
        const struct fy_dtype_seg *g = &dt->segs[s];
        MPI_Count bs = (MPI_Count)fy_basic_tab[g->basic].size;
        if (rem >= g->count * bs) {
            n += g->count;
            rem -= g->count * bs;
        } else {
            if (rem % bs != 0)
                return -1; /* ends inside a basic element */
            n += rem / bs;
            rem = 0;
        }
    }
    return n;
}

MPI_Count fy_dtype_element_bytes(const struct fy_dtype *dt, MPI_Count n)
{
    if (n <= 0 || dt->nbasic == 0)
        return 0;
    MPI_Count bytes = (n / dt->nbasic) * dt->size;
    MPI_Count rem = n % dt->nbasic;
    MPI_Count per_rep = dt->nbasic / dt->rep;
    bytes += (rem / per_rep) * (dt->size / dt->rep);
    rem %= per_rep;
    for (uint32_t s = 0; s < dt->nsegs && rem > 0; s++) {
        const struct fy_dtype_seg *g = &dt->segs[s];
        MPI_Count k = FY_MIN(rem, g->count);
        bytes += k * (MPI_Count)fy_basic_tab[g->basic].size;
        rem -= k;
    }
    return bytes;
}

struct iov_ctx {
    char *buf;
    struct iovec *iov;
    int max, n;
    MPI_Count bytes;
};

static int piece_iov(void *arg, MPI_Aint boff, MPI_Count len)
{
    struct iov_ctx *c = arg;
    char *p = c->buf + boff;
    if (c->n > 0) {
        struct iovec *last = &c->iov[c->n - 1];
        if ((char *)last->iov_base + last->iov_len == p) {
            last->iov_len += (size_t)len;
            c->bytes += len;
            return 0;
        }
    }
    if (c->n == c->max)
        return 1;
    c->iov[c->n].iov_base = p;
    c->iov[c->n].iov_len = (size_t)len;
    c->n++;
    c->bytes += len;
    return 0;
}

int fy_dtype_iov(const void *buf, MPI_Count count, const struct fy_dtype *dt,
                 MPI_Count offset, struct iovec *iov, int max,
                 MPI_Count *bytes_out)
{
    struct iov_ctx c = {(char *)buf, iov, max, 0, 0};
    MPI_Count total = count * dt->size;
    if (max > 0 && offset < total)
        walk_range(dt, offset, total - offset, piece_iov, &c);
    *bytes_out = c.bytes;
    return c.n;
}
