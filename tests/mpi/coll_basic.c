/* SPDX-License-Identifier: MIT */
/* Collective correctness: Barrier; Bcast from every root at sizes up to
 * 1 MiB; Reduce (every root) and Allreduce with every predefined
 * arithmetic, logical and bitwise op on int, the arithmetic ones on double,
 * MINLOC/MAXLOC on MPI_2INT and MPI_DOUBLE_INT; MPI_IN_PLACE for both.
 * Inputs are chosen so every result is exact and computable here. */
#include "mpitest.h"

static int n, me;

static void test_bcast(void)
{
    static const int sz[] = {0, 1, 47, 4096, 64 * MT_KIB, MT_MIB};
    char *b = mt_malloc(MT_MIB + 64);
    for (int root = 0; root < n; root++) {
        for (int i = 0; i < 6; i++) {
            uint32_t seed = (uint32_t)(root * 10 + i);
            if (me == root)
                mt_fill(b, (size_t)sz[i], seed);
            else
                memset(b, 0, (size_t)sz[i]);
            memset(b + sz[i], 0x6B, 64);
            MT_MPI(MPI_Bcast(b, sz[i], MPI_BYTE, root, MPI_COMM_WORLD));
            MT_VERIFY(b, (size_t)sz[i], seed, "Bcast");
            MT_ALL(b + sz[i], 64, 0x6B, "guard after Bcast buffer");
        }
        /* A typed broadcast: 1000 doubles. */
        double d[1000];
        for (int k = 0; k < 1000; k++)
            d[k] = me == root ? k * 0.5 + root : -1.0;
        MT_MPI(MPI_Bcast(d, 1000, MPI_DOUBLE, root, MPI_COMM_WORLD));
        for (int k = 0; k < 1000; k++)
            if (d[k] != k * 0.5 + root)
                MT_FAIL("Bcast double %d: %g", k, d[k]);
    }
    free(b);
}

/* Value rank r contributes at position k, chosen per op so that products
 * and sums stay small and exact. */
static int ival(int op_idx, int r, int k)
{
    switch (op_idx) {
    case 3: /* PROD */
        return (r + k) % 3 + 1;
    case 4: /* LAND */
    case 6: /* LOR */
    case 8: /* LXOR */
        return ((r + k) % 3 == 0) ? 0 : (r + 2 * k);
    default:
        return (r * 37 + k * 11) % 101 - 50 + (k % 7) * (r + 1);
    }
}

static int icombine(int op_idx, int a, int b)
{
    switch (op_idx) {
    case 0:
        return a > b ? a : b;
    case 1:
        return a < b ? a : b;
    case 2:
        return a + b;
    case 3:
        return a * b;
    case 4:
        return (a != 0) && (b != 0);
    case 5:
        return a & b;
    case 6:
        return (a != 0) || (b != 0);
    case 7:
        return a | b;
    case 8:
        return (a != 0) != (b != 0);
    case 9:
        return a ^ b;
    default:
        return 0;
    }
}

static void test_int_ops(int count)
{
    const MPI_Op ops[10] = {MPI_MAX,  MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND,
                            MPI_BAND, MPI_LOR, MPI_BOR, MPI_LXOR, MPI_BXOR};
    static const char *const names[10] = {"MAX",  "MIN", "SUM", "PROD", "LAND",
                                          "BAND", "LOR", "BOR", "LXOR", "BXOR"};
    int *in = mt_malloc((size_t)count * sizeof(int));
    int *out = mt_malloc((size_t)count * sizeof(int));
    int *want = mt_malloc((size_t)count * sizeof(int));
    for (int o = 0; o < 10; o++) {
        for (int k = 0; k < count; k++) {
            in[k] = ival(o, me, k);
            want[k] = ival(o, 0, k);
            for (int r = 1; r < n; r++)
                want[k] = icombine(o, want[k], ival(o, r, k));
        }
        /* Allreduce, then Reduce to each root, then both in place. */
        memset(out, 0, (size_t)count * sizeof(int));
        MT_MPI(MPI_Allreduce(in, out, count, MPI_INT, ops[o], MPI_COMM_WORLD));
        for (int k = 0; k < count; k++)
            if (out[k] != want[k])
                MT_FAIL("Allreduce %s count %d [%d]: got %d want %d", names[o],
                        count, k, out[k], want[k]);
        /* Every root for short vectors; one rotating root for long ones
         * keeps the oversubscribed runs short. */
        for (int root = count > 1000 ? o % n : 0; root < n; root++) {
            if (count > 1000 && root != o % n)
                break;
            memset(out, 0, (size_t)count * sizeof(int));
            MT_MPI(MPI_Reduce(in, out, count, MPI_INT, ops[o], root,
                              MPI_COMM_WORLD));
            if (me == root)
                for (int k = 0; k < count; k++)
                    if (out[k] != want[k])
                        MT_FAIL("Reduce %s root %d [%d]: got %d want %d",
                                names[o], root, k, out[k], want[k]);
        }
        memcpy(out, in, (size_t)count * sizeof(int));
        MT_MPI(MPI_Allreduce(MPI_IN_PLACE, out, count, MPI_INT, ops[o],
                             MPI_COMM_WORLD));
        for (int k = 0; k < count; k++)
            if (out[k] != want[k])
                MT_FAIL("Allreduce IN_PLACE %s [%d]: got %d want %d", names[o],
                        k, out[k], want[k]);
        int root = (o + 1) % n;
        /* MPICH 4.0.2 crashes on an in-place Reduce of a large count to a
         * nonzero root (it dereferences MPI_IN_PLACE); spare it. */
        if (count > 1000 && mt_on_mpich())
            root = 0;
        memcpy(out, in, (size_t)count * sizeof(int));
        MT_MPI(MPI_Reduce(me == root ? MPI_IN_PLACE : out,
                          me == root ? out : NULL, count, MPI_INT, ops[o], root,
                          MPI_COMM_WORLD));
        if (me == root)
            for (int k = 0; k < count; k++)
                if (out[k] != want[k])
                    MT_FAIL("Reduce IN_PLACE %s [%d]: got %d want %d", names[o],
                            k, out[k], want[k]);
    }
    free(in);
    free(out);
    free(want);
}

static void test_double_ops(int count)
{
    const MPI_Op ops[4] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD};
    double *in = mt_malloc((size_t)count * sizeof(double));
    double *out = mt_malloc((size_t)count * sizeof(double));
    for (int o = 0; o < 4; o++) {
        for (int k = 0; k < count; k++)
            in[k] = o == 3 ? (double)((me + k) % 2 + 1) * 0.5
                           : (double)((me * 13 + k) % 17) * 0.25 - 2.0;
        MT_MPI(
            MPI_Allreduce(in, out, count, MPI_DOUBLE, ops[o], MPI_COMM_WORLD));
        for (int k = 0; k < count; k++) {
            double w = 0;
            for (int r = 0; r < n; r++) {
                double v = o == 3 ? (double)((r + k) % 2 + 1) * 0.5
                                  : (double)((r * 13 + k) % 17) * 0.25 - 2.0;
                if (r == 0)
                    w = v;
                else if (o == 0)
                    w = v > w ? v : w;
                else if (o == 1)
                    w = v < w ? v : w;
                else if (o == 2)
                    w += v;
                else
                    w *= v;
            }
            /* Quarters and halves sum and multiply exactly. */
            if (out[k] != w)
                MT_FAIL("Allreduce double op %d [%d]: got %.17g want %.17g", o,
                        k, out[k], w);
        }
    }
    free(in);
    free(out);
}

static void test_loc(void)
{
    struct {
        int v, i;
    } ii[3], io[3];
    struct {
        double v;
        int i;
    } di[3], dout[3];
    for (int k = 0; k < 3; k++) {
        /* Ties on purpose at k == 2: the lowest index must win. */
        ii[k].v = k == 2 ? 5 : (me * 7 + k * 3) % 5;
        ii[k].i = me;
        di[k].v = k == 2 ? 1.5 : ((me * 7 + k * 3) % 5) * 0.5;
        di[k].i = me * 10;
    }
    for (int pass = 0; pass < 2; pass++) {
        MPI_Op op = pass ? MPI_MAXLOC : MPI_MINLOC;
        MT_MPI(MPI_Allreduce(ii, io, 3, MPI_2INT, op, MPI_COMM_WORLD));
        MT_MPI(MPI_Allreduce(di, dout, 3, MPI_DOUBLE_INT, op, MPI_COMM_WORLD));
        for (int k = 0; k < 3; k++) {
            int bv = k == 2 ? 5 : (0 * 7 + k * 3) % 5, bi = 0;
            for (int r = 1; r < n; r++) {
                int v = k == 2 ? 5 : (r * 7 + k * 3) % 5;
                if (pass ? v > bv : v < bv) {
                    bv = v;
                    bi = r;
                }
            }
            MT_EQ(io[k].v, bv,
                  pass ? "MAXLOC 2INT value" : "MINLOC 2INT value");
            MT_EQ(io[k].i, bi,
                  pass ? "MAXLOC 2INT index" : "MINLOC 2INT index");
            MT_CHECK(dout[k].v == (k == 2 ? 1.5 : bv * 0.5),
                     "LOC DOUBLE_INT value %g", dout[k].v);
            MT_EQ(dout[k].i, bi * 10, "LOC DOUBLE_INT index");
        }
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    n = mt_size;
    me = mt_rank;
    for (int i = 0; i < 5; i++)
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    test_bcast();
    test_int_ops(1);
    test_int_ops(7);
    test_int_ops(100000); /* 400 KB: beyond eager sizes */
    test_double_ops(1);
    test_double_ops(1000);
    test_double_ops(70000);
    test_loc();
    return mt_finish("coll_basic");
}
