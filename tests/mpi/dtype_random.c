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
#include "dtype_gen.h"

#define SPAN (64L << 20)

static uint64_t s_seed = 1;
static int s_rounds = 100;
static long s_max = 4L << 20;

static int32_t val(uint32_t round, long i)
{
    return (int32_t)((uint32_t)i * 2654435761u ^ round * 40503u ^ 0x5bd1e995u);
}

/* Ints [0, got) at their offsets hold 'want'; every other byte of the
 * buffer is still 0xEE. */
static void check_scattered(const struct dg_buf *b, const long *o, long got,
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
static void fill_scattered(struct dg_buf *b, const long *o, long n,
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
    dg_rng = s_seed * 0x9e3779b97f4a7c15ull ^ round;
    struct dg_type *a = dg_gen(DG_MAXDEPTH), *b = dg_gen(DG_MAXDEPTH);
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
    long count =
        dg_rnd(0, 3) ? dg_rnd(0, maxc < 64 ? maxc : 64) : dg_rnd(0, maxc);
    long lo, hi, n = a->n * count;
    long *o = dg_offsets(a, count, &lo, &hi);
    int32_t *plain = mt_malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    int32_t *want = mt_malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    int32_t *seq = mt_malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    MPI_Status st;
    int got = -1;
    /* What the type sends, in type order (every rank works it out). */
    struct dg_buf ref = dg_buf_new(lo, hi);
    fill_scattered(&ref, o, n, round);
    for (long i = 0; i < n; i++) {
        memcpy(&want[i], ref.base + o[i], 4);
        seq[i] = val(round, i);
    }
    free(ref.mem);

    /* Typed to plain, plain to typed. */
    if (mt_rank == 0) {
        struct dg_buf s = dg_buf_new(lo, hi);
        fill_scattered(&s, o, n, round);
        MT_MPI(MPI_Send(s.base, (int)count, a->dt, 1, 1, MPI_COMM_WORLD));
        if (dg_disjoint(o, n)) {
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
        if (dg_disjoint(o, n))
            MT_MPI(MPI_Send(seq, (int)n, MPI_INT, 0, 2, MPI_COMM_WORLD));
    }

    /* Both ways at once: a's ints into b's (enough instances of b for
     * them, the rest of b's ints untouched). */
    long bcount = (n + b->n - 1) / b->n + dg_rnd(0, 1);
    if (bcount * (b->ub - b->lb) > SPAN)
        bcount = 0; /* too wide: no typed-to-typed exchange this round */
    long blo, bhi, *bo = dg_offsets(b, bcount, &blo, &bhi);
    if (mt_rank <= 1 && (n == 0 || bcount > 0) &&
        dg_disjoint(bo, b->n * bcount)) {
        struct dg_buf s = dg_buf_new(lo, hi), r = dg_buf_new(blo, bhi);
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
        struct dg_buf s = dg_buf_new(lo, hi);
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
    dg_free(a);
    dg_free(b);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        if (dg_common_opt(argc, argv, &i, &s_rounds, &s_seed))
            continue;
        if (!strcmp(argv[i], "--max") && i + 1 < argc)
            s_max = atol(argv[++i]);
        else
            MT_FAIL("usage: dtype_random [--rounds N] [--seed S] [--max B]");
    }
    MT_CHECK(mt_size >= 2, "needs 2 ranks or more");
    for (int r = 0; r < s_rounds; r++)
        one_round((uint32_t)r);
    return mt_finish("dtype_random");
}
