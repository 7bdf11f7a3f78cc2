/* SPDX-License-Identifier: MIT */
/* Random derived datatypes of MPI_INT leaves for the randomised tests
 * (dtype_random.c, rma_random.c), each with an oracle of the test's own:
 * the byte offset of every int in type order and the type's lower and
 * upper bound, worked out from the constructors' definitions (contiguous,
 * vector, hvector, indexed, hindexed, indexed_block, struct, resized,
 * subarray; nested up to DG_MAXDEPTH deep, negative strides and
 * displacements; multiples of 4 bytes everywhere, so no alignment padding
 * is in question). dg_rng must be seeded alike on every rank that builds
 * the same types. */
#ifndef FY_DTYPE_GEN_H
#define FY_DTYPE_GEN_H

#include <stdbool.h>

#include "mpitest.h"

enum { DG_MAXDEPTH = 3, DG_MAXN = 6, DG_GUARD = 64 };

static uint64_t dg_rng;

struct dg_type {
    MPI_Datatype dt;
    long n;      /* ints in one instance */
    long *off;   /* their byte offsets, in type order */
    long lb, ub; /* extent ub - lb */
    bool marked; /* lb/ub set by a resize somewhere inside (MPI's markers) */
};

static inline long dg_rnd(long lo, long hi) /* in [lo, hi] */
{
    return lo + (long)(mt_splitmix(&dg_rng) % (uint64_t)(hi - lo + 1));
}

static inline struct dg_type *dg_new(long n)
{
    struct dg_type *t = mt_malloc(sizeof(*t));
    t->n = n;
    t->off = mt_malloc(sizeof(long) * (size_t)(n ? n : 1));
    t->marked = false;
    return t;
}

static inline void dg_free(struct dg_type *t)
{
    if (t->dt != MPI_INT)
        MT_MPI(MPI_Type_free(&t->dt));
    free(t->off);
    free(t);
}

/* The type made of instances of 'c' at byte displacements disp[0..k),
 * each a block of bl[i] consecutive instances (one extent apart): the
 * offsets in order, and lb/ub as the minimum and maximum over instances
 * (every constructor here is such a type; 'c' for struct is per block). */
static inline struct dg_type *dg_blocks(struct dg_type **c, int k,
                                        const long *bl, const long *disp)
{
    long n = 0;
    for (int i = 0; i < k; i++)
        n += bl[i] * c[i]->n;
    struct dg_type *t = dg_new(n);
    long at = 0;
    bool first = true;
    for (int i = 0; i < k; i++) {
        long ext = c[i]->ub - c[i]->lb;
        for (long j = 0; j < bl[i]; j++) {
            long d = disp[i] + j * ext;
            for (long e = 0; e < c[i]->n; e++)
                t->off[at++] = d + c[i]->off[e];
            if (first || d + c[i]->lb < t->lb)
                t->lb = d + c[i]->lb;
            if (first || d + c[i]->ub > t->ub)
                t->ub = d + c[i]->ub;
            first = false;
        }
        t->marked |= c[i]->marked;
    }
    return t;
}

static inline struct dg_type *dg_int(void)
{
    struct dg_type *t = dg_new(1);
    t->dt = MPI_INT;
    t->off[0] = 0;
    t->lb = 0;
    t->ub = 4;
    return t;
}

static inline struct dg_type *dg_resized(struct dg_type *c, long lb, long ext)
{
    struct dg_type *t = dg_new(c->n);
    memcpy(t->off, c->off, sizeof(long) * (size_t)c->n);
    t->lb = lb;
    t->ub = lb + ext;
    t->marked = true;
    MT_MPI(MPI_Type_create_resized(c->dt, lb, ext, &t->dt));
    return t;
}

/* Multiples of 4 everywhere, so no alignment padding is in question. */
static inline struct dg_type *dg_gen(int depth)
{
    if (depth == 0 || dg_rnd(0, 4) == 0)
        return dg_int();
    int kind = (int)dg_rnd(0, 8);
    struct dg_type *c = dg_gen(depth - 1), *t = NULL;
    long ext = c->ub - c->lb;
    long cnt = dg_rnd(1, DG_MAXN), bl[DG_MAXN], disp[DG_MAXN];
    struct dg_type *cs[DG_MAXN];
    for (int i = 0; i < DG_MAXN; i++)
        cs[i] = c;
    switch (kind) {
    case 0: /* contiguous */
        bl[0] = cnt;
        disp[0] = 0;
        t = dg_blocks(cs, 1, bl, disp);
        MT_MPI(MPI_Type_contiguous((int)cnt, c->dt, &t->dt));
        break;
    case 1:   /* vector: stride in extents, maybe negative */
    case 2: { /* hvector: stride in bytes */
        long b = dg_rnd(1, 3), stride = dg_rnd(-2 * b, 3 * b);
        if (kind == 2)
            stride = stride * ext + 4 * dg_rnd(0, 3);
        for (int i = 0; i < cnt; i++) {
            bl[i] = b;
            disp[i] = i * (kind == 1 ? stride * ext : stride);
        }
        t = dg_blocks(cs, (int)cnt, bl, disp);
        if (kind == 1)
            MT_MPI(
                MPI_Type_vector((int)cnt, (int)b, (int)stride, c->dt, &t->dt));
        else
            MT_MPI(MPI_Type_create_hvector((int)cnt, (int)b, stride, c->dt,
                                           &t->dt));
        break;
    }
    case 3:   /* indexed: displacements in extents */
    case 4:   /* hindexed: in bytes */
    case 5: { /* indexed_block */
        int ibl[DG_MAXN], idisp[DG_MAXN];
        MPI_Aint adisp[DG_MAXN];
        long b = dg_rnd(1, 3);
        for (int i = 0; i < cnt; i++) {
            bl[i] = kind == 5 ? b : dg_rnd(1, 3);
            long d = dg_rnd(-6, 12);
            disp[i] = kind == 4 ? d * ext + 4 * dg_rnd(0, 2) : d * ext;
            ibl[i] = (int)bl[i];
            idisp[i] = (int)d;
            adisp[i] = disp[i];
        }
        t = dg_blocks(cs, (int)cnt, bl, disp);
        if (kind == 3)
            MT_MPI(MPI_Type_indexed((int)cnt, ibl, idisp, c->dt, &t->dt));
        else if (kind == 4)
            MT_MPI(
                MPI_Type_create_hindexed((int)cnt, ibl, adisp, c->dt, &t->dt));
        else
            MT_MPI(MPI_Type_create_indexed_block((int)cnt, (int)b, idisp, c->dt,
                                                 &t->dt));
        break;
    }
    case 6: { /* struct of this child and others (MPI_INT or new ones) */
        int ibl[DG_MAXN];
        MPI_Aint adisp[DG_MAXN];
        MPI_Datatype dts[DG_MAXN];
        for (int i = 1; i < cnt; i++)
            cs[i] = dg_rnd(0, 1) ? dg_int() : dg_gen(depth - 1);
        /* A resized member sets the struct's bounds by its markers
         * alone; mixing marked and unmarked members would leave the
         * unmarked ones' entries out of lb/ub, so resize them all. */
        bool any = false;
        for (int i = 0; i < cnt; i++)
            any |= cs[i]->marked;
        for (int i = 0; any && i < cnt; i++)
            if (!cs[i]->marked) {
                struct dg_type *r =
                    dg_resized(cs[i], cs[i]->lb, cs[i]->ub - cs[i]->lb);
                dg_free(cs[i]); /* r holds its own reference */
                if (i == 0)
                    c = r;
                cs[i] = r;
            }
        for (int i = 0; i < cnt; i++) {
            bl[i] = dg_rnd(1, 3);
            disp[i] = 4 * dg_rnd(-16, 64);
            ibl[i] = (int)bl[i];
            adisp[i] = disp[i];
            dts[i] = cs[i]->dt;
        }
        t = dg_blocks(cs, (int)cnt, bl, disp);
        MT_MPI(MPI_Type_create_struct((int)cnt, ibl, adisp, dts, &t->dt));
        for (int i = 1; i < cnt; i++)
            dg_free(cs[i]);
        break;
    }
    case 7: /* resized: a lower bound below or inside, a larger extent */
        t = dg_resized(c, c->lb - 4 * dg_rnd(-1, 4), ext + 4 * dg_rnd(0, 8));
        break;
    default: { /* subarray of up to 3 dimensions, C or Fortran order */
        int nd = (int)dg_rnd(1, 3), sizes[3], sub[3], start[3];
        int order = dg_rnd(0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        long total = 1;
        for (int i = 0; i < nd; i++) {
            sizes[i] = (int)dg_rnd(1, 4);
            sub[i] = (int)dg_rnd(1, sizes[i]);
            start[i] = (int)dg_rnd(0, sizes[i] - sub[i]);
            total *= sizes[i];
        }
        /* Its elements in array order, at their place in the full array;
         * the type's bounds are the full array's, from 0 (whatever the
         * old type's lower bound: MPI_Type_create_subarray resizes to
         * [0, full extent)). */
        long k = 1;
        for (int i = 0; i < nd; i++)
            k *= sub[i];
        long *d = mt_malloc(sizeof(long) * (size_t)k), *one = NULL;
        long idx[3] = {0, 0, 0};
        for (long e = 0; e < k; e++) {
            long lin = 0;
            for (int s = 0; s < nd; s++) { /* slowest dimension first */
                int dim = order == MPI_ORDER_C ? s : nd - 1 - s;
                lin = lin * sizes[dim] + start[dim] + idx[dim];
            }
            d[e] = lin * ext;
            for (int s = nd - 1; s >= 0; s--) { /* next, fastest first */
                int dim = order == MPI_ORDER_C ? s : nd - 1 - s;
                if (++idx[dim] < sub[dim])
                    break;
                idx[dim] = 0;
            }
        }
        one = mt_malloc(sizeof(long) * (size_t)k);
        struct dg_type **cc = mt_malloc(sizeof(*cc) * (size_t)k);
        for (long e = 0; e < k; e++) {
            one[e] = 1;
            cc[e] = c;
        }
        t = dg_blocks(cc, (int)k, one, d);
        t->lb = 0;
        t->ub = total * ext;
        t->marked = true;
        free(cc);
        free(one);
        free(d);
        MT_MPI(MPI_Type_create_subarray(nd, sizes, sub, start, order, c->dt,
                                        &t->dt));
        break;
    }
    }
    if (c != t)
        dg_free(c);
    MT_MPI(MPI_Type_commit(&t->dt));
    return t;
}

/* Offsets of every int of 'count' instances, relative to the buffer. */
static inline long *dg_offsets(const struct dg_type *t, long count, long *lo,
                               long *hi)
{
    long ext = t->ub - t->lb, n = t->n * count;
    long *o = mt_malloc(sizeof(long) * (size_t)(n ? n : 1));
    *lo = 0;
    *hi = 0;
    for (long c = 0; c < count; c++)
        for (long e = 0; e < t->n; e++) {
            long x = c * ext + t->off[e];
            o[c * t->n + e] = x;
            if (x < *lo)
                *lo = x;
            if (x + 4 > *hi)
                *hi = x + 4;
        }
    return o;
}

static inline int dg_cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* No two ints of the 'n' offsets overlap (a receive type must not). */
static inline bool dg_disjoint(const long *o, long n)
{
    long *s = mt_malloc(sizeof(long) * (size_t)(n ? n : 1));
    memcpy(s, o, sizeof(long) * (size_t)n);
    qsort(s, (size_t)n, sizeof(long), dg_cmp_long);
    bool ok = true;
    for (long i = 1; i < n && ok; i++)
        ok = s[i] - s[i - 1] >= 4;
    free(s);
    return ok;
}

/* A buffer holding 'count' of the type: span [lo, hi) plus guards, all
 * 0xEE; returns the pointer to pass to MPI (offset 0). */
struct dg_buf {
    unsigned char *mem, *base;
    size_t len;
};

static inline struct dg_buf dg_buf_new(long lo, long hi)
{
    struct dg_buf b;
    b.len = (size_t)(hi - lo) + 2 * DG_GUARD;
    b.mem = mt_malloc(b.len);
    memset(b.mem, 0xEE, b.len);
    b.base = b.mem + DG_GUARD - lo;
    return b;
}

/* --rounds N and --seed S, the randomised tests' common options: true
 * when argv[*i] is one of them (*i then at its value). A missing or
 * malformed value ends the job with the reason. */
static inline bool dg_common_opt(int argc, char **argv, int *i, int *rounds,
                                 uint64_t *seed)
{
    const char *a = argv[*i];
    if (strcmp(a, "--rounds") != 0 && strcmp(a, "--seed") != 0)
        return false;
    MT_CHECK(*i + 1 < argc, "%s takes a value", a);
    const char *v = argv[++*i];
    char *end = NULL;
    unsigned long long x = strtoull(v, &end, 0);
    MT_CHECK(*v && !*end && (a[2] != 'r' || x <= 1000000),
             "%s takes a number, not '%s'", a, v);
    if (a[2] == 'r')
        *rounds = (int)x;
    else
        *seed = x;
    return true;
}

#endif /* FY_DTYPE_GEN_H */
