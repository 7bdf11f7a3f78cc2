/* SPDX-License-Identifier: MIT */
/* Random derived datatypes over the wire, against an oracle of the test's
 * own: each round builds a random type of MPI_INT leaves (contiguous,
 * vector, hvector, indexed, hindexed, indexed_block, struct, resized,
 * subarray, nested up to three deep, with negative strides and
 * displacements) and computes here, from the constructors' definitions,
 * the byte offset of every int in it and its lower bound and extent. The
 * library's MPI_Type_get_extent / MPI_Type_size must agree, then:
 *   - rank 0 sends 'count' of the type (0 B to a few MiB: mailbox, cells,
 *     rendezvous, the shared copy) and rank 1 receives plain ints: the
 *     sequence, in type order;
 *   - rank 1 sends plain ints and rank 0 receives them through the type
 *     (when no two of its ints overlap): each int at its offset, every
 *     other byte of the span and its guards untouched;
 *   - both ways at once with MPI_Sendrecv, one side typed and the other a
 *     second random type of at least as many ints (a partial receive:
 *     MPI_Get_elements must count the ints that came);
 *   - MPI_Bcast from rank 0 through the type to every rank, the others
 *     receiving plain ints.
 * --rounds N (default 100), --seed S, --max BYTES (largest message,
 * default 4 MiB). Needs 2 or more ranks (ranks past 1 take part in the
 * broadcasts only). */
#include <stdbool.h>

#include "mpitest.h"

enum { MAXDEPTH = 3, MAXN = 6, GUARD = 64 };
#define SPAN (64L << 20)

static uint64_t s_seed = 1, s_rng;
static int s_rounds = 100;
static long s_max = 4L << 20;

struct ty {
    MPI_Datatype dt;
    long n;      /* ints in one instance */
    long *off;   /* their byte offsets, in type order */
    long lb, ub; /* extent ub - lb */
    bool marked; /* lb/ub set by a resize somewhere inside (MPI's markers) */
};

static long rnd(long lo, long hi) /* in [lo, hi] */
{
    return lo + (long)(mt_splitmix(&s_rng) % (uint64_t)(hi - lo + 1));
}

static struct ty *ty_new(long n)
{
    struct ty *t = mt_malloc(sizeof(*t));
    t->n = n;
    t->off = mt_malloc(sizeof(long) * (size_t)(n ? n : 1));
    t->marked = false;
    return t;
}

static void ty_free(struct ty *t)
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
static struct ty *ty_blocks(struct ty **c, int k, const long *bl,
                            const long *disp)
{
    long n = 0;
    for (int i = 0; i < k; i++)
        n += bl[i] * c[i]->n;
    struct ty *t = ty_new(n);
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

static struct ty *ty_int(void)
{
    struct ty *t = ty_new(1);
    t->dt = MPI_INT;
    t->off[0] = 0;
    t->lb = 0;
    t->ub = 4;
    return t;
}

static struct ty *ty_resized(struct ty *c, long lb, long ext)
{
    struct ty *t = ty_new(c->n);
    memcpy(t->off, c->off, sizeof(long) * (size_t)c->n);
    t->lb = lb;
    t->ub = lb + ext;
    t->marked = true;
    MT_MPI(MPI_Type_create_resized(c->dt, lb, ext, &t->dt));
    return t;
}

/* Multiples of 4 everywhere, so no alignment padding is in question. */
static struct ty *gen(int depth)
{
    if (depth == 0 || rnd(0, 4) == 0)
        return ty_int();
    int kind = (int)rnd(0, 8);
    struct ty *c = gen(depth - 1), *t = NULL;
    long ext = c->ub - c->lb;
    long cnt = rnd(1, MAXN), bl[MAXN], disp[MAXN];
    struct ty *cs[MAXN];
    for (int i = 0; i < MAXN; i++)
        cs[i] = c;
    switch (kind) {
    case 0: /* contiguous */
        bl[0] = cnt;
        disp[0] = 0;
        t = ty_blocks(cs, 1, bl, disp);
        MT_MPI(MPI_Type_contiguous((int)cnt, c->dt, &t->dt));
        break;
    case 1:   /* vector: stride in extents, maybe negative */
    case 2: { /* hvector: stride in bytes */
        long b = rnd(1, 3), stride = rnd(-2 * b, 3 * b);
        if (kind == 2)
            stride = stride * ext + 4 * rnd(0, 3);
        for (int i = 0; i < cnt; i++) {
            bl[i] = b;
            disp[i] = i * (kind == 1 ? stride * ext : stride);
        }
        t = ty_blocks(cs, (int)cnt, bl, disp);
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
        int ibl[MAXN], idisp[MAXN];
        MPI_Aint adisp[MAXN];
        long b = rnd(1, 3);
        for (int i = 0; i < cnt; i++) {
            bl[i] = kind == 5 ? b : rnd(1, 3);
            long d = rnd(-6, 12);
            disp[i] = kind == 4 ? d * ext + 4 * rnd(0, 2) : d * ext;
            ibl[i] = (int)bl[i];
            idisp[i] = (int)d;
            adisp[i] = disp[i];
        }
        t = ty_blocks(cs, (int)cnt, bl, disp);
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
        int ibl[MAXN];
        MPI_Aint adisp[MAXN];
        MPI_Datatype dts[MAXN];
        for (int i = 1; i < cnt; i++)
            cs[i] = rnd(0, 1) ? ty_int() : gen(depth - 1);
        /* A resized member sets the struct's bounds by its markers
         * alone; mixing marked and unmarked members would leave the
         * unmarked ones' entries out of lb/ub, so resize them all. */
        bool any = false;
        for (int i = 0; i < cnt; i++)
            any |= cs[i]->marked;
        for (int i = 0; any && i < cnt; i++)
            if (!cs[i]->marked) {
                struct ty *r =
                    ty_resized(cs[i], cs[i]->lb, cs[i]->ub - cs[i]->lb);
                ty_free(cs[i]); /* r holds its own reference */
                if (i == 0)
                    c = r;
                cs[i] = r;
            }
        for (int i = 0; i < cnt; i++) {
            bl[i] = rnd(1, 3);
            disp[i] = 4 * rnd(-16, 64);
            ibl[i] = (int)bl[i];
            adisp[i] = disp[i];
            dts[i] = cs[i]->dt;
        }
        t = ty_blocks(cs, (int)cnt, bl, disp);
        MT_MPI(MPI_Type_create_struct((int)cnt, ibl, adisp, dts, &t->dt));
        for (int i = 1; i < cnt; i++)
            ty_free(cs[i]);
        break;
    }
    case 7: /* resized: a lower bound below or inside, a larger extent */
        t = ty_resized(c, c->lb - 4 * rnd(-1, 4), ext + 4 * rnd(0, 8));
        break;
    default: { /* subarray of up to 3 dimensions, C or Fortran order */
        int nd = (int)rnd(1, 3), sizes[3], sub[3], start[3];
        int order = rnd(0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        long total = 1;
        for (int i = 0; i < nd; i++) {
            sizes[i] = (int)rnd(1, 4);
            sub[i] = (int)rnd(1, sizes[i]);
            start[i] = (int)rnd(0, sizes[i] - sub[i]);
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
        struct ty **cc = mt_malloc(sizeof(*cc) * (size_t)k);
        for (long e = 0; e < k; e++) {
            one[e] = 1;
            cc[e] = c;
        }
        t = ty_blocks(cc, (int)k, one, d);
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
        ty_free(c);
    MT_MPI(MPI_Type_commit(&t->dt));
    return t;
}

/* Offsets of every int of 'count' instances, relative to the buffer. */
static long *offsets(const struct ty *t, long count, long *lo, long *hi)
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

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* No two ints of the 'n' offsets overlap (a receive type must not). */
static bool disjoint(const long *o, long n)
{
    long *s = mt_malloc(sizeof(long) * (size_t)(n ? n : 1));
    memcpy(s, o, sizeof(long) * (size_t)n);
    qsort(s, (size_t)n, sizeof(long), cmp_long);
    bool ok = true;
    for (long i = 1; i < n && ok; i++)
        ok = s[i] - s[i - 1] >= 4;
    free(s);
    return ok;
}

static int32_t val(uint32_t round, long i)
{
    return (int32_t)((uint32_t)i * 2654435761u ^ round * 40503u ^ 0x5bd1e995u);
}

/* A buffer holding 'count' of the type: span [lo, hi) plus guards, all
 * 0xEE; returns the pointer to pass to MPI (offset 0). */
struct tbuf {
    unsigned char *mem, *base;
    size_t len;
};

static struct tbuf tbuf_new(long lo, long hi)
{
    struct tbuf b;
    b.len = (size_t)(hi - lo) + 2 * GUARD;
    b.mem = mt_malloc(b.len);
    memset(b.mem, 0xEE, b.len);
    b.base = b.mem + GUARD - lo;
    return b;
}

/* Ints [0, got) at their offsets hold 'want'; every other byte of the
 * buffer is still 0xEE. */
static void check_scattered(const struct tbuf *b, const long *o, long got,
                            const int32_t *want, uint32_t round,
                            const char *what)
{
    for (long i = 0; i < got; i++) {
        int32_t v;
        memcpy(&v, b->base + o[i], 4);
        if (v != want[i])
            MT_FAIL("round %u %s: int %ld at offset %ld is %d, expected %d",
                    round, what, i, o[i], v, want[i]);
        memset(b->base + o[i], 0xEE, 4);
    }
    MT_ALL(b->mem, b->len, 0xEE, what);
}

static void check_seq(const int32_t *v, const int32_t *want, long n,
                      uint32_t round, const char *what)
{
    for (long i = 0; i < n; i++)
        if (v[i] != want[i])
            MT_FAIL("round %u %s: int %ld is %d, expected %d", round, what, i,
                    v[i], want[i]);
}

/* The ints i = 0, 1, ... written in turn at their offsets: where a send
 * type's ints overlap, the later one's value is what all of them send. */
static void fill_scattered(struct tbuf *b, const long *o, long n,
                           uint32_t round)
{
    for (long i = 0; i < n; i++) {
        int32_t v = val(round, i);
        memcpy(b->base + o[i], &v, 4);
    }
}

static void one_round(uint32_t round)
{
    /* Every rank builds the same types (same seed). */
    s_rng = s_seed * 0x9e3779b97f4a7c15ull ^ round;
    struct ty *a = gen(MAXDEPTH), *b = gen(MAXDEPTH);
    MPI_Aint lb, ext;
    int size;
    MT_MPI(MPI_Type_get_extent(a->dt, &lb, &ext));
    MT_EQ(lb, a->lb, "MPI_Type_get_extent's lb");
    MT_EQ(ext, a->ub - a->lb, "MPI_Type_get_extent's extent");
    MT_MPI(MPI_Type_size(a->dt, &size));
    MT_EQ(size, 4 * a->n, "MPI_Type_size");

    /* A count for a message of up to s_max bytes, mostly small, and a
     * span of at most SPAN bytes (sparse types can be very wide). */
    long per = 4 * a->n, maxc = s_max / per;
    if (maxc > SPAN / (a->ub - a->lb))
        maxc = SPAN / (a->ub - a->lb);
    long count = rnd(0, 3) ? rnd(0, maxc < 64 ? maxc : 64) : rnd(0, maxc);
    long lo, hi, n = a->n * count;
    long *o = offsets(a, count, &lo, &hi);
    int32_t *plain = mt_malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    int32_t *want = mt_malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    int32_t *seq = mt_malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    MPI_Status st;
    int got = -1;
    /* What the type sends, in type order (every rank works it out). */
    struct tbuf ref = tbuf_new(lo, hi);
    fill_scattered(&ref, o, n, round);
    for (long i = 0; i < n; i++) {
        memcpy(&want[i], ref.base + o[i], 4);
        seq[i] = val(round, i);
    }
    free(ref.mem);

    /* Typed to plain, plain to typed. */
    if (mt_rank == 0) {
        struct tbuf s = tbuf_new(lo, hi);
        fill_scattered(&s, o, n, round);
        MT_MPI(MPI_Send(s.base, (int)count, a->dt, 1, 1, MPI_COMM_WORLD));
        if (disjoint(o, n)) {
            memset(s.mem, 0xEE, s.len);
            MT_MPI(
                MPI_Recv(s.base, (int)count, a->dt, 1, 2, MPI_COMM_WORLD, &st));
            MT_MPI(MPI_Get_elements(&st, MPI_INT, &got));
            MT_EQ(got, n, "ints received through the type");
            check_scattered(&s, o, n, seq, round, "plain to typed");
        }
        free(s.mem);
    } else if (mt_rank == 1) {
        MT_MPI(MPI_Recv(plain, (int)n, MPI_INT, 0, 1, MPI_COMM_WORLD, &st));
        MT_MPI(MPI_Get_count(&st, MPI_INT, &got));
        MT_EQ(got, n, "ints received");
        check_seq(plain, want, n, round, "typed to plain");
        if (disjoint(o, n))
            MT_MPI(MPI_Send(seq, (int)n, MPI_INT, 0, 2, MPI_COMM_WORLD));
    }

    /* Both ways at once: a's ints into b's (enough instances of b for
     * them, the rest of b's ints untouched). */
    long bcount = (n + b->n - 1) / b->n + rnd(0, 1);
    if (bcount * (b->ub - b->lb) > SPAN)
        bcount = 0; /* too wide: no typed-to-typed exchange this round */
    long blo, bhi, *bo = offsets(b, bcount, &blo, &bhi);
    if (mt_rank <= 1 && (n == 0 || bcount > 0) && disjoint(bo, b->n * bcount)) {
        struct tbuf s = tbuf_new(lo, hi), r = tbuf_new(blo, bhi);
        fill_scattered(&s, o, n, round);
        int peer = 1 - mt_rank;
        MT_MPI(MPI_Sendrecv(s.base, (int)count, a->dt, peer, 3, r.base,
                            (int)bcount, b->dt, peer, 3, MPI_COMM_WORLD, &st));
        MT_MPI(MPI_Get_elements(&st, MPI_INT, &got));
        MT_EQ(got, n, "ints received through the second type");
        check_scattered(&r, bo, n, want, round, "typed to typed");
        free(s.mem);
        free(r.mem);
    }

    /* Broadcast through the type from rank 0. */
    if (mt_rank == 0) {
        struct tbuf s = tbuf_new(lo, hi);
        fill_scattered(&s, o, n, round);
        MT_MPI(MPI_Bcast(s.base, (int)count, a->dt, 0, MPI_COMM_WORLD));
        free(s.mem);
    } else {
        memset(plain, 0, sizeof(int32_t) * (size_t)n);
        MT_MPI(MPI_Bcast(plain, (int)n, MPI_INT, 0, MPI_COMM_WORLD));
        check_seq(plain, want, n, round, "broadcast");
    }
    free(bo);
    free(want);
    free(seq);
    free(plain);
    free(o);
    ty_free(a);
    ty_free(b);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--rounds"))
            s_rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed"))
            s_seed = strtoull(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--max"))
            s_max = atol(argv[i + 1]);
        else
            MT_FAIL("usage: dtype_random [--rounds N] [--seed S] [--max B]");
    }
    MT_CHECK(mt_size >= 2, "needs 2 ranks or more");
    for (int r = 0; r < s_rounds; r++)
        one_round((uint32_t)r);
    return mt_finish("dtype_random");
}
