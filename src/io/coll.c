/* SPDX-License-Identifier: MIT */
/* Two-phase collective access. The byte range every rank's access covers
 * is cut into one contiguous domain per aggregator (f->cb_nodes ranks,
 * spread over the communicator); each domain is processed in rounds of
 * f->cb_buffer_size bytes. In a round every rank sends each aggregator the
 * (offset, length) pairs of its pieces that fall in the aggregator's window
 * (plus the data, for a write); the aggregator then moves its whole window
 * with one pread or pwrite (reading the holes first when the pieces do not
 * cover it) and, for a read, sends each rank its bytes back. Strided
 * accesses of many ranks thus reach the file system as a few large
 * contiguous requests. */
#define _GNU_SOURCE
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "coll/coll.h"
#include "util/copy.h"
#include "util/util.h"

/* What a rank knows about everyone's access (allgathered). */
struct range {
    int64_t lo, hi; /* file bytes [lo, hi); lo == hi: nothing */
    int64_t npieces;
};

/* One pair sent to an aggregator; 'spos' (stream position) stays local. */
struct pair {
    int64_t off, len;
};

static int cmp_pair(const void *a, const void *b)
{
    const struct pair *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Cut the pieces at end of file (size): returns the stream bytes kept. */
static MPI_Offset clip_eof(struct fy_io_piece *p, int *np, MPI_Offset size)
{
    MPI_Offset kept = 0;
    int n = 0;
    for (; n < *np; n++) {
        if (p[n].off >= size)
            break;
        if (p[n].off + p[n].len > size) {
            p[n].len = size - p[n].off;
            kept += p[n++].len;
            break;
        }
        kept += p[n].len;
    }
    *np = n;
    return kept;
}

struct tp {
    struct fy_file *f;
    bool write;
    char *buf; /* the stream */
    struct fy_io_piece *p;
    MPI_Offset *spre; /* stream position of each piece */
    int np;
    int P, naggr;
    int64_t lo, hi, dom, cb;
    int *cur; /* per aggregator: first piece not yet fully sent */
    /* per round */
    int *scnt, *sdsp, *rcnt, *rdsp;     /* pairs, bytes */
    int *sdcnt, *sddsp, *rdcnt, *rddsp; /* data, bytes */
    char *abuf;                         /* aggregator window */
    /* Data staging, kept across rounds: fresh 16 MiB buffers every round
     * would cost a page fault per 4 KiB each time. */
    char *sbuf, *rbuf;
    size_t scap, rcap;
};

/* Make *buf hold at least 'need' bytes. */
static int grow(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    char *n = realloc(*buf, need);
    if (!n)
        return -ENOMEM;
    *buf = n;
    *cap = need;
    return 0;
}

static int aggr_rank(const struct tp *t, int a)
{
    return (int)((int64_t)a * t->P / t->naggr);
}

/* Window of aggregator a in round r: [ws, we) (empty when ws >= we). */
static void window(const struct tp *t, int a, int64_t r, int64_t *ws,
                   int64_t *we)
{
    int64_t ds = t->lo + a * t->dom, de = ds + t->dom;
    if (de > t->hi)
        de = t->hi;
    *ws = ds + r * t->cb;
    *we = *ws + t->cb < de ? *ws + t->cb : de;
}

static int run_round(struct tp *t, int64_t r)
{
    struct fy_comm *c = t->f->comm;
    struct fy_dtype *byte = fy_dtype_get(MPI_BYTE);
    int P = t->P, rc = 0, err = 0;

    /* My pairs per aggregator, in aggregator order, with stream spots. */
    int npairs = 0, cap = 0;
    struct pair *pairs = NULL;
    MPI_Offset *spos = NULL;
    memset(t->scnt, 0, sizeof(int) * (size_t)P);
    memset(t->sdcnt, 0, sizeof(int) * (size_t)P);
    for (int a = 0; a < t->naggr; a++) {
        int64_t ws, we;
        window(t, a, r, &ws, &we);
        int dst = aggr_rank(t, a);
        int i = t->cur[a];
        while (i < t->np && t->p[i].off + t->p[i].len <= ws)
            i++;
        t->cur[a] = i;
        for (; i < t->np && t->p[i].off < we; i++) {
            int64_t s = t->p[i].off > ws ? t->p[i].off : ws;
            int64_t e = t->p[i].off + t->p[i].len;
            if (e > we)
                e = we;
            if (npairs == cap) {
                cap = cap ? 2 * cap : 64;
                struct pair *np2 = realloc(pairs, sizeof(*pairs) * (size_t)cap);
                MPI_Offset *sp2 =
                    np2 ? realloc(spos, sizeof(*spos) * (size_t)cap) : NULL;
                if (np2)
                    pairs = np2;
                if (!sp2) {
                    rc = -ENOMEM;
                    goto free_pairs;
                }
                spos = sp2;
            }
            pairs[npairs] = (struct pair){s, e - s};
            spos[npairs] = t->spre[i] + (s - t->p[i].off);
            npairs++;
            t->scnt[dst] += (int)sizeof(struct pair);
            t->sdcnt[dst] += (int)(e - s);
        }
    }

    int64_t tot_pairs = 0, tot_data = 0;
    int cnt2[2 * 64], *sc2 = cnt2, *rc2;
    if (P > 32) {
        sc2 = malloc(sizeof(int) * 4 * (size_t)P);
        if (!sc2) {
            rc = -ENOMEM;
            goto free_pairs;
        }
    }
    rc2 = sc2 + 2 * P;
    for (int q = 0; q < P; q++) {
        sc2[2 * q] = t->scnt[q];
        sc2[2 * q + 1] = t->sdcnt[q];
    }
    rc = fy_coll_alltoall(sc2, 2, fy_dtype_get(MPI_INT), rc2, 2,
                          fy_dtype_get(MPI_INT), c, NULL);
    for (int q = 0; q < P && !rc; q++) {
        t->rcnt[q] = rc2[2 * q];
        t->rdcnt[q] = rc2[2 * q + 1];
        t->sdsp[q] = q ? t->sdsp[q - 1] + t->scnt[q - 1] : 0;
        t->sddsp[q] = q ? t->sddsp[q - 1] + t->sdcnt[q - 1] : 0;
        t->rdsp[q] = q ? t->rdsp[q - 1] + t->rcnt[q - 1] : 0;
        t->rddsp[q] = q ? t->rddsp[q - 1] + t->rdcnt[q - 1] : 0;
        tot_pairs += t->rcnt[q];
        tot_data += t->rdcnt[q];
    }
    if (sc2 != cnt2)
        free(sc2);
    if (rc)
        goto free_pairs;
    int64_t my_data = t->sddsp[P - 1] + t->sdcnt[P - 1];

    struct pair *rp = malloc((size_t)tot_pairs + 1);
    if (!rp ||
        grow(&t->sbuf, &t->scap, (size_t)(t->write ? my_data : tot_data) + 1) ||
        grow(&t->rbuf, &t->rcap, (size_t)(t->write ? tot_data : my_data) + 1)) {
        rc = -ENOMEM;
        goto free_bufs;
    }
    char *sdata = t->sbuf, *rdata = t->rbuf;
    rc = fy_coll_alltoallv(pairs, fy_vec_int(t->scnt), fy_vec_int(t->sdsp),
                           byte, rp, fy_vec_int(t->rcnt), fy_vec_int(t->rdsp),
                           byte, c, NULL);
    if (rc)
        goto free_bufs;
    if (t->write) {
        for (int k = 0, o = 0; k < npairs; k++) {
            fy_copy(sdata + o, t->buf + spos[k], (size_t)pairs[k].len);
            o += (int)pairs[k].len;
        }
        rc = fy_coll_alltoallv(
            sdata, fy_vec_int(t->sdcnt), fy_vec_int(t->sddsp), byte, rdata,
            fy_vec_int(t->rdcnt), fy_vec_int(t->rddsp), byte, c, NULL);
        if (rc)
            goto free_bufs;
    }

    /* The aggregator's part: one contiguous request for its window. */
    int nrp = (int)(tot_pairs / (int64_t)sizeof(struct pair));
    if (nrp > 0) {
        int64_t mn = INT64_MAX, mx = 0, covered = 0;
        for (int k = 0; k < nrp; k++) {
            if (rp[k].off < mn)
                mn = rp[k].off;
            if (rp[k].off + rp[k].len > mx)
                mx = rp[k].off + rp[k].len;
        }
        bool holes = !t->write;
        if (t->write) {
            struct pair *sorted = malloc(sizeof(*sorted) * (size_t)nrp);
            if (!sorted) {
                err = -ENOMEM;
                goto reply;
            }
            memcpy(sorted, rp, sizeof(*sorted) * (size_t)nrp);
            qsort(sorted, (size_t)nrp, sizeof(*sorted), cmp_pair);
            int64_t end = mn;
            for (int k = 0; k < nrp; k++) {
                int64_t s = sorted[k].off > end ? sorted[k].off : end;
                int64_t e = sorted[k].off + sorted[k].len;
                if (e > s) {
                    covered += e - s;
                    end = e;
                }
            }
            free(sorted);
            holes = covered < mx - mn;
        }
        if (t->f->atomic)
            err = fy_io_lock(t->f, t->write ? F_WRLCK : F_RDLCK, mn, mx - mn);
        if (!err && holes) {
            MPI_Offset got;
            err = fy_io_pread_full(t->f->fd, t->abuf, mx - mn, mn, &got);
            if (!err && got < mx - mn)
                memset(t->abuf + got, 0, (size_t)(mx - mn - got));
        }
        if (!err && t->write) {
            /* Rank order: where pieces overlap, the higher rank wins. */
            for (int k = 0, o = 0; k < nrp; k++) {
                fy_copy(t->abuf + (rp[k].off - mn), rdata + o,
                        (size_t)rp[k].len);
                o += (int)rp[k].len;
            }
            err = fy_io_pwrite_full(t->f->fd, t->abuf, mx - mn, mn);
            if (err)
                FY_ERROR("MPI-IO: collective write of %lld bytes at %lld "
                         "to %s: %s",
                         (long long)(mx - mn), (long long)mn, t->f->path,
                         strerror(-err));
        } else if (!err) {
            for (int k = 0, o = 0; k < nrp; k++) {
                fy_copy(sdata + o, t->abuf + (rp[k].off - mn),
                        (size_t)rp[k].len);
                o += (int)rp[k].len;
            }
        }
        if (t->f->atomic)
            fy_io_lock(t->f, F_UNLCK, mn, mx - mn);
    }
reply:
    if (!t->write) {
        rc = fy_coll_alltoallv(
            sdata, fy_vec_int(t->rdcnt), fy_vec_int(t->rddsp), byte, rdata,
            fy_vec_int(t->sdcnt), fy_vec_int(t->sddsp), byte, c, NULL);
        for (int k = 0, o = 0; !rc && k < npairs; k++) {
            fy_copy(t->buf + spos[k], rdata + o, (size_t)pairs[k].len);
            o += (int)pairs[k].len;
        }
    }
free_bufs:
    free(rp);
free_pairs:
    free(pairs);
    free(spos);
    return rc ? rc : err;
}

static int twophase(struct fy_file *f, MPI_Offset voff, void *buf,
                    MPI_Offset nbytes, bool write, MPI_Offset *done_out)
{
    struct fy_comm *c = f->comm;
    struct tp t = {.f = f, .write = write, .buf = buf, .P = c->size};
    int rc = 0, err = 0;
    MPI_Offset done = 0;
    if (nbytes > 0)
        err = fy_io_pieces(f, voff, nbytes, &t.p, &t.np);
    if (!err && !write && t.np > 0) {
        struct stat st;
        if (fstat(f->fd, &st) != 0)
            err = -errno;
        else
            done = clip_eof(t.p, &t.np, (MPI_Offset)st.st_size);
    } else if (!err) {
        done = nbytes;
    }
    struct range mine = {0, 0, 0}, *all = malloc(sizeof(*all) * (size_t)t.P);
    if (!all)
        err = -ENOMEM;
    if (!err && t.np > 0)
        mine = (struct range){t.p[0].off, t.p[t.np - 1].off + t.p[t.np - 1].len,
                              t.np};
    if ((rc = fy_io_agree(c, err)) != 0)
        goto free_all;
    rc = fy_coll_allgather(&mine, sizeof(mine), fy_dtype_get(MPI_BYTE), all,
                           sizeof(mine), fy_dtype_get(MPI_BYTE), c, NULL);
    if (rc)
        goto free_all;
    t.lo = INT64_MAX;
    t.hi = 0;
    bool strided = false;
    for (int q = 0; q < t.P; q++) {
        if (all[q].npieces == 0)
            continue;
        if (all[q].lo < t.lo)
            t.lo = all[q].lo;
        if (all[q].hi > t.hi)
            t.hi = all[q].hi;
        if (all[q].npieces > 1)
            strided = true;
    }
    /* Nothing interleaved (each rank one contiguous range), or two-phase
     * disabled by a hint: every rank moves its own range directly. */
    if (t.lo >= t.hi || !strided || !(write ? f->cb_write : f->cb_read)) {
        MPI_Offset d = 0;
        if (nbytes > 0)
            err = write ? fy_io_write(f, voff, buf, nbytes, &d)
                        : fy_io_read(f, voff, buf, nbytes, &d);
        done = d;
        rc = fy_io_agree(c, err);
        goto free_all;
    }

    t.naggr = f->cb_nodes < t.P ? f->cb_nodes : t.P;
    if (t.naggr < 1)
        t.naggr = 1;
    t.dom = (t.hi - t.lo + t.naggr - 1) / t.naggr;
    t.cb = f->cb_buffer_size < t.dom ? f->cb_buffer_size : t.dom;
    int64_t rounds = (t.dom + t.cb - 1) / t.cb;
    t.spre = malloc(sizeof(*t.spre) * (size_t)(t.np + 1));
    t.cur = calloc((size_t)t.naggr, sizeof(int));
    int *ints = malloc(sizeof(int) * 8 * (size_t)t.P);
    bool is_aggr = false;
    for (int a = 0; a < t.naggr; a++)
        is_aggr |= aggr_rank(&t, a) == c->rank;
    t.abuf = is_aggr ? malloc((size_t)t.cb) : NULL;
    err = (!t.spre || !t.cur || !ints || (is_aggr && !t.abuf)) ? -ENOMEM : 0;
    if ((rc = fy_io_agree(c, err)) != 0)
        goto free_round;
    for (int i = 0; i < t.np; i++)
        t.spre[i] = i ? t.spre[i - 1] + t.p[i - 1].len : 0;
    t.scnt = ints;
    t.sdsp = ints + t.P;
    t.rcnt = ints + 2 * t.P;
    t.rdsp = ints + 3 * t.P;
    t.sdcnt = ints + 4 * t.P;
    t.sddsp = ints + 5 * t.P;
    t.rdcnt = ints + 6 * t.P;
    t.rddsp = ints + 7 * t.P;
    for (int64_t r = 0; r < rounds; r++) {
        int e = run_round(&t, r);
        if (e && !err)
            err = e;
    }
    rc = fy_io_agree(c, err);
free_round:
    free(t.spre);
    free(t.cur);
    free(ints);
    free(t.abuf);
    free(t.sbuf);
    free(t.rbuf);
free_all:
    free(all);
    free(t.p);
    if (!rc)
        *done_out = done;
    return rc;
}

int fy_io_read_all(struct fy_file *f, MPI_Offset voff, void *buf,
                   MPI_Offset nbytes, MPI_Offset *done_out)
{
    return twophase(f, voff, buf, nbytes, false, done_out);
}

int fy_io_write_all(struct fy_file *f, MPI_Offset voff, const void *buf,
                    MPI_Offset nbytes, MPI_Offset *done_out)
{
    return twophase(f, voff, (void *)buf, nbytes, true, done_out);
}
