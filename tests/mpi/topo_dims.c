/* SPDX-License-Identifier: MIT */
/* MPI_Dims_create returns the balanced factorisation: for nnodes 1..1000
 * and ndims 1..4, with and without fixed entries, the result must equal a
 * brute-force reference that lists every non-increasing factorisation and
 * keeps the one whose largest and smallest dimensions are closest (ties:
 * smallest sum of squares, then lexicographically smallest). Also known
 * answers from MPICH's balance tests, large inputs, and the error classes
 * of impossible requests. The ranks share the sweep. */
#include "mpitest.h"

#define MAXD 4

struct fact {
    int d[MAXD];
    long long spread;
    long long sq;
    int found;
};

/* Whether a (spread sq d) beats b: the definition the test holds the
 * library to. */
static int better(const struct fact *a, const struct fact *b, int k)
{
    if (!b->found)
        return 1;
    if (a->spread != b->spread)
        return a->spread < b->spread;
    if (a->sq != b->sq)
        return a->sq < b->sq;
    for (int i = 0; i < k; i++)
        if (a->d[i] != b->d[i])
            return a->d[i] < b->d[i];
    return 0;
}

/* Every non-increasing d[i..k) with product n and d[i] <= maxd. */
static void enumerate(int n, int k, int i, int maxd, struct fact *cur,
                      struct fact *best)
{
    if (i == k - 1) {
        if (n > maxd)
            return;
        cur->d[i] = n;
        cur->spread = cur->d[0] - cur->d[k - 1];
        cur->sq = 0;
        for (int j = 0; j < k; j++)
            cur->sq += (long long)cur->d[j] * cur->d[j];
        if (better(cur, best, k)) {
            *best = *cur;
            best->found = 1;
        }
        return;
    }
    for (int d = 1; d <= n && d <= maxd; d++) {
        if (n % d)
            continue;
        cur->d[i] = d;
        enumerate(n / d, k, i + 1, d, cur, best);
    }
}

static struct fact reference(int n, int k)
{
    struct fact cur = {{0}, 0, 0, 0}, best = {{0}, 0, 0, 0};
    enumerate(n, k, 0, n, &cur, &best);
    return best;
}

static void show(char *buf, size_t len, const int *d, int k)
{
    size_t off = 0;
    for (int i = 0; i < k && off < len; i++)
        off +=
            (size_t)snprintf(buf + off, len - off, "%s%d", i ? "x" : "", d[i]);
}

static void expect_dims(int n, int k, const int *in, const int *want)
{
    int got[64];
    MT_CHECK(k <= 64, "at most 64 dimensions here, not %d", k);
    memcpy(got, in, (size_t)k * sizeof(int));
    MT_MPI(MPI_Dims_create(n, k, got));
    for (int i = 0; i < k; i++) {
        if (got[i] != want[i]) {
            char g[512], w[512], p[512];
            show(g, sizeof g, got, k);
            show(w, sizeof w, want, k);
            show(p, sizeof p, in, k);
            MT_FAIL("Dims_create(%d, %d, %s) gave %s, expected %s", n, k, p, g,
                    w);
        }
    }
}

/* Every nnodes and ndims in range, all entries free. */
static void sweep_free(void)
{
    for (int n = 1 + mt_rank; n <= 1000; n += mt_size)
        for (int k = 1; k <= MAXD; k++) {
            struct fact r = reference(n, k);
            MT_CHECK(r.found, "no reference for %d in %d", n, k);
            int zero[MAXD] = {0};
            expect_dims(n, k, zero, r.d);
        }
}

/* Fixed entries: each position of each pattern fixed to a divisor of n;
 * the free ones must be the reference for n / product, in order. */
static void sweep_fixed(void)
{
    for (int n = 1 + mt_rank; n <= 1000; n += mt_size) {
        for (int k = 2; k <= MAXD; k++) {
            for (int mask = 1; mask < (1 << k) - 1; mask++) {
                /* Fix the masked positions to small divisors of n. */
                int in[MAXD] = {0}, prod = 1;
                for (int i = 0; i < k; i++) {
                    if (!(mask & (1 << i)))
                        continue;
                    int f = 1;
                    for (int c = 2 + i; c <= 7; c++)
                        if ((n / prod) % c == 0) {
                            f = c;
                            break;
                        }
                    in[i] = f;
                    prod *= f;
                }
                int nfree = k - __builtin_popcount((unsigned)mask);
                struct fact r = reference(n / prod, nfree);
                int want[MAXD];
                for (int i = 0, j = 0; i < k; i++)
                    want[i] = in[i] ? in[i] : r.d[j++];
                expect_dims(n, k, in, want);
            }
        }
    }
}

static void known_answers(void)
{
    /* 2-D cases from MPICH's list of past bad answers, its 10^9-in-3 test,
     * and a tie of this definition (360 in 3: 10x6x6 has the same spread
     * as 9x8x5, whose sum of squares is smaller). */
    static const struct {
        int n, k, d[3];
    } known[] = {
        {72, 2, {9, 8, 0}},
        {180, 2, {15, 12, 0}},
        {1323, 2, {49, 27, 0}},
        {6125, 2, {125, 49, 0}},
        {360, 3, {9, 8, 5}},
        {8, 3, {2, 2, 2}},
        {1000000000, 3, {1000, 1000, 1000}},
        {7, 2, {7, 1, 0}},
        {1, 3, {1, 1, 1}},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        int zero[3] = {0, 0, 0};
        expect_dims(known[i].n, known[i].k, zero, known[i].d);
    }
    /* Many dimensions: 2^30 in 30 is all 2s; 12 in 9 is 3x2x2x1x...x1. */
    int d30[30] = {0}, w30[30];
    for (int i = 0; i < 30; i++)
        w30[i] = 2;
    expect_dims(1 << 30, 30, d30, w30);
    int d9[9] = {0}, w9[9] = {3, 2, 2, 1, 1, 1, 1, 1, 1};
    expect_dims(12, 9, d9, w9);
    /* A large number with 1344 divisors, quickly. */
    int big[6] = {0};
    double t0 = MPI_Wtime();
    MT_MPI(MPI_Dims_create(735134400, 6, big));
    long long p = 1;
    for (int i = 0; i < 6; i++) {
        p *= big[i];
        if (i)
            MT_CHECK(big[i] <= big[i - 1], "non-increasing at %d", i);
    }
    MT_EQ(p, 735134400, "product of the 6 dims");
    MT_CHECK(MPI_Wtime() - t0 < 5.0, "735134400 in 6 took %.1f s",
             MPI_Wtime() - t0);
    /* ndims 0: only one node fits. */
    MT_MPI(MPI_Dims_create(1, 0, NULL));
}

static void errors(void)
{
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int a[2] = {4, 0};
    MT_ERRCLASS(MPI_Dims_create(6, 2, a), MPI_ERR_DIMS, "6 nodes, a fixed 4");
    MT_EQ(a[1], 0, "dims untouched after an error");
    int b[3] = {0, -1, 0};
    MT_ERRCLASS(MPI_Dims_create(6, 3, b), MPI_ERR_DIMS, "a negative entry");
    int c[2] = {2, 2};
    MT_ERRCLASS(MPI_Dims_create(8, 2, c), MPI_ERR_DIMS,
                "all fixed, product 4 for 8 nodes");
    MT_MPI(MPI_Dims_create(4, 2, c));
    MT_CHECK(c[0] == 2 && c[1] == 2, "all fixed and right: unchanged");
    int d[2] = {0, 0};
    MT_ERRCLASS(MPI_Dims_create(4, -1, d), MPI_ERR_DIMS, "ndims -1");
    MT_ERRCLASS(MPI_Dims_create(0, 2, d), MPI_ERR_ARG, "nnodes 0");
    MT_ERRCLASS(MPI_Dims_create(-3, 2, d), MPI_ERR_ARG, "nnodes -3");
    MT_ERRCLASS(MPI_Dims_create(4, 0, NULL), MPI_ERR_DIMS,
                "4 nodes in 0 dimensions");
    /* A product of fixed entries that overflows an int. */
    int e[3] = {65536, 65536, 0};
    MT_ERRCLASS(MPI_Dims_create(1 << 30, 3, e), MPI_ERR_DIMS,
                "fixed product above nnodes");
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    sweep_free();
    sweep_fixed();
    known_answers();
    errors();
    return mt_finish("topo_dims");
}
