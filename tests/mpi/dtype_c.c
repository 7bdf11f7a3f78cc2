/* SPDX-License-Identifier: MIT */
/* The large-count (MPI-4 "_c") datatype constructors against their int
 * twins with the same small arguments: size, extent, true extent,
 * envelope and contents (both query forms) and the packed bytes of a
 * patterned buffer must agree. Then values beyond INT_MAX, which cost no
 * memory since nothing is moved: sizes and extents through the _c queries
 * (the int ones say MPI_UNDEFINED), MPI 4.0's large-count contents, and
 * MPI_ERR_COUNT where Ferry cannot build the type (darray). */
#include "mpitest.h"

#include <limits.h>

enum { MAXA = 64 };

/* Everything MPI says about t, flattened for comparison. */
struct desc {
    MPI_Count size, lb, extent, tlb, textent;
    MPI_Count ni, na, nc, nt;
    int combiner;
    int ints[MAXA];
    MPI_Aint aints[MAXA];
    MPI_Count counts[MAXA];
    MPI_Datatype types[MAXA];
};

static void describe(MPI_Datatype t, struct desc *d)
{
    memset(d, 0, sizeof(*d));
    MT_MPI(MPI_Type_size_c(t, &d->size));
    MT_MPI(MPI_Type_get_extent_c(t, &d->lb, &d->extent));
    MT_MPI(MPI_Type_get_true_extent_c(t, &d->tlb, &d->textent));
    MT_MPI(MPI_Type_get_envelope_c(t, &d->ni, &d->na, &d->nc, &d->nt,
                                   &d->combiner));
    MT_CHECK(d->ni <= MAXA && d->na <= MAXA && d->nc <= MAXA && d->nt <= MAXA,
             "envelope too large");
    MT_MPI(MPI_Type_get_contents_c(t, d->ni, d->na, d->nc, d->nt, d->ints,
                                   d->aints, d->counts, d->types));
    for (MPI_Count i = 0; i < d->nt; i++) {
        /* Compare the type's own description, not the fresh handle. */
        MPI_Count sz;
        MT_MPI(MPI_Type_size_c(d->types[i], &sz));
        int ni, na, nt, comb;
        MT_MPI(MPI_Type_get_envelope(d->types[i], &ni, &na, &nt, &comb));
        if (comb != MPI_COMBINER_NAMED)
            MT_MPI(MPI_Type_free(&d->types[i]));
        d->types[i] = (MPI_Datatype)(sz * 16 + comb);
    }
}

/* t (int form) and tc (_c form) describe the same type, pack alike, and
 * the int queries agree with the _c ones. Frees both. */
static void same(MPI_Datatype t, MPI_Datatype tc, const char *what)
{
    MT_MPI(MPI_Type_commit(&t));
    MT_MPI(MPI_Type_commit(&tc));
    struct desc a, b;
    describe(t, &a);
    describe(tc, &b);
    MT_CHECK(memcmp(&a, &b, sizeof(a)) == 0,
             "%s: the _c form's description differs (size %lld/%lld, "
             "extent %lld/%lld, envelope %lld,%lld,%lld,%lld/%lld,%lld,%lld,"
             "%lld)",
             what, (long long)a.size, (long long)b.size, (long long)a.extent,
             (long long)b.extent, (long long)a.ni, (long long)a.na,
             (long long)a.nc, (long long)a.nt, (long long)b.ni, (long long)b.na,
             (long long)b.nc, (long long)b.nt);
    int ni, na, nt, comb, sz;
    MT_MPI(MPI_Type_get_envelope(tc, &ni, &na, &nt, &comb));
    MT_EQ(ni, a.ni, what);
    MT_EQ(na, a.na, what);
    MT_EQ(nt, a.nt, what);
    MT_EQ(comb, a.combiner, what);
    MT_MPI(MPI_Type_size(tc, &sz));
    MT_EQ(sz, a.size, what);
    /* Pack two elements of each from the same patterned memory (the
     * types reach at most 4 KiB past their origin). */
    enum { SPAN = 8192 };
    char *src = mt_malloc(2 * SPAN), *pa = mt_malloc(SPAN),
         *pb = mt_malloc(SPAN);
    mt_fill(src, 2 * SPAN, 7);
    MPI_Count pos_a = 0, pos_b = 0, psz;
    MT_MPI(MPI_Pack_size_c(2, t, MPI_COMM_WORLD, &psz));
    MT_CHECK(psz <= SPAN, "%s: pack size %lld", what, (long long)psz);
    MT_MPI(MPI_Pack_c(src + SPAN / 2, 2, t, pa, SPAN, &pos_a, MPI_COMM_WORLD));
    MT_MPI(MPI_Pack_c(src + SPAN / 2, 2, tc, pb, SPAN, &pos_b, MPI_COMM_WORLD));
    MT_EQ(pos_a, pos_b, what);
    MT_CHECK(memcmp(pa, pb, (size_t)pos_a) == 0, "%s: packed bytes differ",
             what);
    free(src);
    free(pa);
    free(pb);
    MT_MPI(MPI_Type_free(&t));
    MT_MPI(MPI_Type_free(&tc));
}

static void twins(void)
{
    MPI_Datatype t, tc;
    MT_MPI(MPI_Type_contiguous(5, MPI_INT, &t));
    MT_MPI(MPI_Type_contiguous_c(5, MPI_INT, &tc));
    same(t, tc, "contiguous");

    MT_MPI(MPI_Type_vector(3, 2, 5, MPI_INT, &t));
    MT_MPI(MPI_Type_vector_c(3, 2, 5, MPI_INT, &tc));
    same(t, tc, "vector");

    MT_MPI(MPI_Type_vector(3, 2, -4, MPI_SHORT, &t));
    MT_MPI(MPI_Type_vector_c(3, 2, -4, MPI_SHORT, &tc));
    same(t, tc, "vector, negative stride");

    MT_MPI(MPI_Type_create_hvector(4, 1, 24, MPI_DOUBLE, &t));
    MT_MPI(MPI_Type_create_hvector_c(4, 1, 24, MPI_DOUBLE, &tc));
    same(t, tc, "hvector");

    int bl[3] = {1, 3, 2}, di[3] = {7, 0, 12};
    MPI_Count blc[3] = {1, 3, 2}, dic[3] = {7, 0, 12};
    MPI_Aint da[3] = {56, 0, 100};
    MPI_Count dac[3] = {56, 0, 100};
    MT_MPI(MPI_Type_indexed(3, bl, di, MPI_INT, &t));
    MT_MPI(MPI_Type_indexed_c(3, blc, dic, MPI_INT, &tc));
    same(t, tc, "indexed");

    MT_MPI(MPI_Type_create_hindexed(3, bl, da, MPI_INT, &t));
    MT_MPI(MPI_Type_create_hindexed_c(3, blc, dac, MPI_INT, &tc));
    same(t, tc, "hindexed");

    MT_MPI(MPI_Type_create_indexed_block(3, 2, di, MPI_FLOAT, &t));
    MT_MPI(MPI_Type_create_indexed_block_c(3, 2, dic, MPI_FLOAT, &tc));
    same(t, tc, "indexed_block");

    MT_MPI(MPI_Type_create_hindexed_block(3, 2, da, MPI_FLOAT, &t));
    MT_MPI(MPI_Type_create_hindexed_block_c(3, 2, dac, MPI_FLOAT, &tc));
    same(t, tc, "hindexed_block");

    MPI_Datatype vec;
    MT_MPI(MPI_Type_vector(2, 1, 3, MPI_CHAR, &vec));
    MPI_Datatype ty[3] = {MPI_DOUBLE, vec, MPI_INT};
    MT_MPI(MPI_Type_create_struct(3, bl, da, ty, &t));
    MT_MPI(MPI_Type_create_struct_c(3, blc, dac, ty, &tc));
    MT_MPI(MPI_Type_free(&vec));
    same(t, tc, "struct");

    MT_MPI(MPI_Type_create_resized(MPI_INT, -4, 32, &t));
    MT_MPI(MPI_Type_create_resized_c(MPI_INT, -4, 32, &tc));
    same(t, tc, "resized");

    int sz[3] = {6, 5, 4}, sub[3] = {2, 3, 1}, st[3] = {1, 2, 3};
    MPI_Count szc[3] = {6, 5, 4}, subc[3] = {2, 3, 1}, stc[3] = {1, 2, 3};
    for (int order = 0; order < 2; order++) {
        int o = order ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
        MT_MPI(MPI_Type_create_subarray(3, sz, sub, st, o, MPI_INT, &t));
        MT_MPI(MPI_Type_create_subarray_c(3, szc, subc, stc, o, MPI_INT, &tc));
        same(t, tc, "subarray");
    }

    int gs[2] = {10, 7},
        dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 2};
    MPI_Count gsc[2] = {10, 7};
    for (int r = 0; r < 4; r++) {
        MT_MPI(MPI_Type_create_darray(4, r, 2, gs, dist, darg, ps, MPI_ORDER_C,
                                      MPI_INT, &t));
        MT_MPI(MPI_Type_create_darray_c(4, r, 2, gsc, dist, darg, ps,
                                        MPI_ORDER_C, MPI_INT, &tc));
        same(t, tc, "darray");
    }
}

static void big(void)
{
    const MPI_Count G = (MPI_Count)1 << 30, big3 = 3 * G;
    MPI_Datatype t;
    MPI_Count size, lb, ext, ni, na, nc, nt;
    int comb, isz;
    MPI_Aint alb, aext;

    /* 3 GiB of bytes in one contiguous type. */
    MT_MPI(MPI_Type_contiguous_c(big3, MPI_BYTE, &t));
    MT_MPI(MPI_Type_commit(&t));
    MT_MPI(MPI_Type_size_c(t, &size));
    MT_EQ(size, big3, "Type_size_c of 3 GiB");
    MT_MPI(MPI_Type_size(t, &isz));
    MT_EQ(isz, MPI_UNDEFINED, "Type_size of 3 GiB");
    MT_MPI(MPI_Type_get_extent_c(t, &lb, &ext));
    MT_EQ(lb, 0, "lb");
    MT_EQ(ext, big3, "Type_get_extent_c of 3 GiB");
    MT_MPI(MPI_Type_get_extent(t, &alb, &aext));
    MT_EQ(aext, big3, "Type_get_extent (MPI_Aint) of 3 GiB");
    MT_MPI(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nt, &comb));
    MT_CHECK(ni == 0 && na == 0 && nc == 1 && nt == 1 &&
                 comb == MPI_COMBINER_CONTIGUOUS,
             "contiguous_c envelope %lld %lld %lld %lld", (long long)ni,
             (long long)na, (long long)nc, (long long)nt);
    MPI_Count cnt;
    MPI_Datatype old;
    MT_MPI(MPI_Type_get_contents_c(t, 0, 0, 1, 1, NULL, NULL, &cnt, &old));
    MT_EQ(cnt, big3, "contiguous_c large count");
    MT_CHECK(old == MPI_BYTE, "contiguous_c old type");
    /* The int query cannot describe it. */
    int ini, ina, int_;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MT_ERRCLASS(MPI_Type_get_envelope(t, &ini, &ina, &int_, &comb),
                MPI_ERR_TYPE, "Type_get_envelope of a large-count type");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MT_MPI(MPI_Type_free(&t));

    /* vector_c: 3 blocks of 2^31 bytes, stride 2^31 + 1. */
    MPI_Count b31 = (MPI_Count)1 << 31;
    MT_MPI(MPI_Type_vector_c(3, b31, b31 + 1, MPI_BYTE, &t));
    MT_MPI(MPI_Type_commit(&t));
    MT_MPI(MPI_Type_size_c(t, &size));
    MT_EQ(size, 3 * b31, "vector_c size");
    MT_MPI(MPI_Type_get_extent_c(t, &lb, &ext));
    MT_EQ(ext, 2 * (b31 + 1) + b31, "vector_c extent");
    MT_MPI(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nt, &comb));
    MT_CHECK(ni == 0 && na == 0 && nc == 3 && nt == 1 &&
                 comb == MPI_COMBINER_VECTOR,
             "vector_c envelope");
    MPI_Count c3[3];
    MT_MPI(MPI_Type_get_contents_c(t, 0, 0, 3, 1, NULL, NULL, c3, &old));
    MT_CHECK(c3[0] == 3 && c3[1] == b31 && c3[2] == b31 + 1,
             "vector_c contents");
    MT_MPI(MPI_Type_free(&t));

    /* hindexed_c with a block beyond INT_MAX: all in the large counts. */
    MPI_Count hb[2] = {b31, 1}, hd[2] = {0, 4 * G};
    MT_MPI(MPI_Type_create_hindexed_c(2, hb, hd, MPI_BYTE, &t));
    MT_MPI(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nt, &comb));
    MT_CHECK(ni == 0 && na == 0 && nc == 5 && nt == 1 &&
                 comb == MPI_COMBINER_HINDEXED,
             "hindexed_c envelope");
    MPI_Count c5[5];
    MT_MPI(MPI_Type_get_contents_c(t, 0, 0, 5, 1, NULL, NULL, c5, &old));
    MT_CHECK(c5[0] == 2 && c5[1] == b31 && c5[2] == 1 && c5[3] == 0 &&
                 c5[4] == 4 * G,
             "hindexed_c contents");
    MT_MPI(MPI_Type_size_c(t, &size));
    MT_EQ(size, b31 + 1, "hindexed_c size");
    MT_MPI(MPI_Type_free(&t));

    /* subarray_c of a 4 Gi-element dimension. */
    MPI_Count s1[1] = {4 * G}, u1[1] = {b31}, o1[1] = {G};
    MT_MPI(
        MPI_Type_create_subarray_c(1, s1, u1, o1, MPI_ORDER_C, MPI_BYTE, &t));
    MT_MPI(MPI_Type_size_c(t, &size));
    MT_EQ(size, b31, "subarray_c size");
    MT_MPI(MPI_Type_get_extent_c(t, &lb, &ext));
    MT_EQ(ext, 4 * G, "subarray_c extent");
    MT_MPI(MPI_Type_get_true_extent_c(t, &lb, &ext));
    MT_EQ(lb, G, "subarray_c true lb");
    MT_EQ(ext, b31, "subarray_c true extent");
    MT_MPI(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nt, &comb));
    MT_CHECK(ni == 2 && na == 0 && nc == 3 && nt == 1 &&
                 comb == MPI_COMBINER_SUBARRAY,
             "subarray_c envelope");
    int i2[2];
    MT_MPI(MPI_Type_get_contents_c(t, 2, 0, 3, 1, i2, NULL, c3, &old));
    MT_CHECK(i2[0] == 1 && i2[1] == MPI_ORDER_C && c3[0] == 4 * G &&
                 c3[1] == b31 && c3[2] == G,
             "subarray_c contents");
    MT_MPI(MPI_Type_free(&t));

    /* Beyond what Ferry builds: darray over more than INT_MAX elements. */
    MPI_Count gsc[1] = {4 * G};
    int dist[1] = {MPI_DISTRIBUTE_BLOCK}, darg[1] = {MPI_DISTRIBUTE_DFLT_DARG};
    int ps[1] = {1};
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MT_ERRCLASS(MPI_Type_create_darray_c(1, 0, 1, gsc, dist, darg, ps,
                                         MPI_ORDER_C, MPI_BYTE, &t),
                MPI_ERR_COUNT, "darray_c beyond INT_MAX");
    MT_ERRCLASS(MPI_Type_vector_c(-1, 1, 1, MPI_BYTE, &t), MPI_ERR_COUNT,
                "vector_c negative count");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Bounds that leave MPI_Aint's range are refused (MPI_ERR_ARG), never
 * wrapped into a small extent that a send would then trust: a struct of
 * ints at 0 and LONG_MAX came out with extent 4, an hvector striding by
 * LONG_MIN / 2 with a negative one. */
static void bounds_overflow(void)
{
    MPI_Datatype t = MPI_DATATYPE_NULL, big;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, LONG_MAX};
    MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
    MT_ERRCLASS(MPI_Type_create_struct(2, bl, d, ty, &t), MPI_ERR_ARG,
                "struct with a block at LONG_MAX");
    MT_ERRCLASS(MPI_Type_create_hvector(3, 1, LONG_MIN / 2, MPI_DOUBLE, &t),
                MPI_ERR_ARG, "hvector striding by LONG_MIN / 2");
    MT_ERRCLASS(MPI_Type_create_resized(MPI_INT, LONG_MAX, 10, &t), MPI_ERR_ARG,
                "resized past LONG_MAX");
    MT_MPI(MPI_Type_contiguous(1 << 30, MPI_DOUBLE, &big));
    MT_ERRCLASS(MPI_Type_vector(3, 1, INT_MAX, big, &t), MPI_ERR_ARG,
                "vector whose stride times extent overflows");
    int di[2] = {0, INT_MAX};
    MT_ERRCLASS(MPI_Type_indexed(2, bl, di, big, &t), MPI_ERR_ARG,
                "indexed whose displacement times extent overflows");
    MT_CHECK(t == MPI_DATATYPE_NULL, "no type made by the refused calls");
    /* At the edge, not beyond: accepted with the exact bounds. */
    MPI_Aint lb, ext;
    MT_MPI(MPI_Type_create_hvector(2, 1, LONG_MIN / 2, MPI_DOUBLE, &t));
    MT_MPI(MPI_Type_get_extent(t, &lb, &ext));
    MT_EQ(lb, LONG_MIN / 2, "hvector at the edge: lb");
    MT_EQ(ext, -(LONG_MIN / 2) + 8, "hvector at the edge: extent");
    MT_MPI(MPI_Type_free(&t));
    MT_MPI(MPI_Type_free(&big));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    twins();
    big();
    bounds_overflow();
    return mt_finish("dtype_c");
}
