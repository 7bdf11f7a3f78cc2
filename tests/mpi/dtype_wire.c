/* SPDX-License-Identifier: MIT */
/* Derived datatypes over the wire: vector, hvector, indexed, struct (with
 * a resized extent) and contiguous sends received as plain contiguous data
 * and the reverse (contiguous data scattered into a strided layout whose
 * holes must stay untouched), small and beyond 1 MiB, plus MPI_Get_count /
 * MPI_Get_elements for derived types and partial receives. */
#include <stddef.h>

#include "mpitest.h"

static int dest, src;

static int val(int r, int i)
{
    return r * 1000003 + i * 7 + 1;
}

/* vector(count, 3, 5) of MPI_INT: 3 of every 5 ints. */
static void vector_case(int count)
{
    MPI_Datatype vec;
    MT_MPI(MPI_Type_vector(count, 3, 5, MPI_INT, &vec));
    MT_MPI(MPI_Type_commit(&vec));
    int sz = -1;
    MPI_Aint lb = -1, ext = -1;
    MT_MPI(MPI_Type_size(vec, &sz));
    MT_EQ(sz, count * 3 * 4, "vector Type_size");
    MT_MPI(MPI_Type_get_extent(vec, &lb, &ext));
    MT_EQ(lb, 0, "vector lb");
    MT_EQ(ext, ((count - 1) * 5 + 3) * 4, "vector extent");

    int span = count * 5, packed = count * 3;
    int *strided = mt_malloc((size_t)span * sizeof(int));
    int *flat = mt_malloc((size_t)packed * sizeof(int));
    MPI_Status st;
    MPI_Request req;
    int c = -1;

    /* Strided -> contiguous. */
    for (int i = 0; i < span; i++)
        strided[i] = (i % 5) < 3 ? val(mt_rank, i) : -1;
    MT_MPI(MPI_Isend(strided, 1, vec, dest, 1, MPI_COMM_WORLD, &req));
    MT_MPI(MPI_Recv(flat, packed, MPI_INT, src, 1, MPI_COMM_WORLD, &st));
    MT_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_Get_count(&st, MPI_INT, &c);
    MT_EQ(c, packed, "vector->contiguous count");
    for (int b = 0, k = 0; b < count; b++)
        for (int j = 0; j < 3; j++, k++)
            if (flat[k] != val(src, b * 5 + j))
                MT_FAIL("vector->contiguous [%d]: %d", k, flat[k]);

    /* Contiguous -> strided; holes keep their sentinel. */
    for (int k = 0; k < packed; k++)
        flat[k] = val(mt_rank, k) ^ 0x55;
    for (int i = 0; i < span; i++)
        strided[i] = -77;
    MT_MPI(MPI_Isend(flat, packed, MPI_INT, dest, 2, MPI_COMM_WORLD, &req));
    MT_MPI(MPI_Recv(strided, 1, vec, src, 2, MPI_COMM_WORLD, &st));
    MT_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_Get_count(&st, vec, &c);
    MT_EQ(c, 1, "Get_count in vector units");
    MPI_Get_elements(&st, vec, &c);
    MT_EQ(c, packed, "Get_elements of a vector receive");
    for (int b = 0, k = 0; b < count; b++)
        for (int j = 0; j < 5; j++) {
            int got = strided[b * 5 + j];
            if (j < 3 && got != (val(src, k++) ^ 0x55))
                MT_FAIL("contiguous->vector block %d elem %d: %d", b, j, got);
            if (j >= 3 && got != -77)
                MT_FAIL("contiguous->vector hole %d/%d overwritten: %d", b, j,
                        got);
        }

    /* Partial: send fewer ints than one vector holds. */
    int part = packed - 2;
    MT_MPI(MPI_Isend(flat, part, MPI_INT, dest, 3, MPI_COMM_WORLD, &req));
    MT_MPI(MPI_Recv(strided, 1, vec, src, 3, MPI_COMM_WORLD, &st));
    MT_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_Get_count(&st, vec, &c);
    MT_EQ(c, MPI_UNDEFINED, "Get_count of a partial vector");
    MPI_Get_elements(&st, vec, &c);
    MT_EQ(c, part, "Get_elements of a partial vector");

    MT_MPI(MPI_Type_free(&vec));
    MT_EQ(vec, MPI_DATATYPE_NULL, "Type_free sets MPI_DATATYPE_NULL");
    free(strided);
    free(flat);
}

/* indexed: block lengths 1, 2, 3, ... at growing gaps, repeated. */
static void indexed_case(int nblocks)
{
    int *bl = mt_malloc((size_t)nblocks * sizeof(int));
    int *disp = mt_malloc((size_t)nblocks * sizeof(int));
    int total = 0, end = 0;
    for (int b = 0; b < nblocks; b++) {
        bl[b] = b % 4 + 1;
        disp[b] = end + b % 3 + 1; /* a hole of 1..3 ints before each */
        end = disp[b] + bl[b];
        total += bl[b];
    }
    MPI_Datatype idx;
    MT_MPI(MPI_Type_indexed(nblocks, bl, disp, MPI_INT, &idx));
    MT_MPI(MPI_Type_commit(&idx));
    int *lay = mt_malloc((size_t)end * sizeof(int));
    int *flat = mt_malloc((size_t)total * sizeof(int));
    MPI_Request req;
    for (int i = 0; i < end; i++)
        lay[i] = val(mt_rank, i);
    MT_MPI(MPI_Isend(lay, 1, idx, dest, 4, MPI_COMM_WORLD, &req));
    MT_MPI(MPI_Recv(flat, total, MPI_INT, src, 4, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    MT_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int b = 0, k = 0; b < nblocks; b++)
        for (int j = 0; j < bl[b]; j++, k++)
            if (flat[k] != val(src, disp[b] + j))
                MT_FAIL("indexed->contiguous [%d]: %d", k, flat[k]);
    /* And back: contiguous into the indexed layout, holes untouched. */
    for (int i = 0; i < end; i++)
        lay[i] = -5;
    for (int k = 0; k < total; k++)
        flat[k] = val(mt_rank, k) + 3;
    MT_MPI(MPI_Isend(flat, total, MPI_INT, dest, 5, MPI_COMM_WORLD, &req));
    MT_MPI(MPI_Recv(lay, 1, idx, src, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MT_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    int k = 0, b = 0;
    for (int i = 0; i < end; i++) {
        int inside = b < nblocks && i >= disp[b] && i < disp[b] + bl[b];
        if (inside) {
            if (lay[i] != val(src, k) + 3)
                MT_FAIL("contiguous->indexed at %d: %d", i, lay[i]);
            k++;
            if (i == disp[b] + bl[b] - 1)
                b++;
        } else if (lay[i] != -5) {
            MT_FAIL("contiguous->indexed hole %d overwritten: %d", i, lay[i]);
        }
    }
    MT_MPI(MPI_Type_free(&idx));
    free(bl);
    free(disp);
    free(lay);
    free(flat);
}

struct rec {
    int id;
    double x[2];
    char tag[3];
};

/* Array of structs (struct type resized to sizeof(struct rec)) received as
 * the same type signature packed tightly (int, 2 doubles, 3 chars with no
 * padding), and back. */
static void struct_case(int count)
{
    MPI_Datatype t0, rect, packedt;
    int bl[3] = {1, 2, 3};
    MPI_Aint d[3] = {offsetof(struct rec, id), offsetof(struct rec, x),
                     offsetof(struct rec, tag)};
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MT_MPI(MPI_Type_create_struct(3, bl, d, ty, &t0));
    MT_MPI(MPI_Type_create_resized(t0, 0, sizeof(struct rec), &rect));
    MT_MPI(MPI_Type_commit(&rect));
    /* Tightly packed records: the struct's natural extent is rounded up
     * to the alignment of double (24), so resize it to 23. */
    MPI_Aint pd[3] = {0, 4, 20};
    MPI_Datatype p0;
    MT_MPI(MPI_Type_create_struct(3, bl, pd, ty, &p0));
    MPI_Aint lb, ext;
    MT_MPI(MPI_Type_get_extent(p0, &lb, &ext));
    MT_EQ(ext, 24, "struct extent is padded to double alignment");
    MT_MPI(MPI_Type_create_resized(p0, 0, 23, &packedt));
    MT_MPI(MPI_Type_commit(&packedt));
    MT_MPI(MPI_Type_free(&p0));
    MT_MPI(MPI_Type_get_extent(rect, &lb, &ext));
    MT_EQ(ext, sizeof(struct rec), "resized struct extent");
    int sz = -1;
    MT_MPI(MPI_Type_size(packedt, &sz));
    MT_EQ(sz, 23, "packed struct size");

    struct rec *recs = mt_malloc((size_t)count * sizeof(struct rec));
    unsigned char *raw = mt_malloc((size_t)count * 23);
    memset(recs, 0, (size_t)count * sizeof(struct rec));
    for (int i = 0; i < count; i++) {
        recs[i].id = val(mt_rank, i);
        recs[i].x[0] = i * 0.5;
        recs[i].x[1] = -mt_rank - i * 0.25;
        memcpy(recs[i].tag, (char[3]){(char)('a' + i % 26), (char)mt_rank, 'z'},
               3);
    }
    MPI_Request req;
    MPI_Status st;
    int c = -1;
    MT_MPI(MPI_Isend(recs, count, rect, dest, 6, MPI_COMM_WORLD, &req));
    MT_MPI(MPI_Recv(raw, count, packedt, src, 6, MPI_COMM_WORLD, &st));
    MT_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_Get_count(&st, packedt, &c);
    MT_EQ(c, count, "struct count");
    MPI_Get_elements(&st, packedt, &c);
    MT_EQ(c, count * 6, "struct elements (1 int + 2 doubles + 3 chars)");
    for (int i = 0; i < count; i++) {
        int id;
        double x[2];
        memcpy(&id, raw + i * 23, 4);
        memcpy(x, raw + i * 23 + 4, 16);
        const unsigned char *t = raw + i * 23 + 20;
        if (id != val(src, i) || x[0] != i * 0.5 || x[1] != -src - i * 0.25 ||
            t[0] != 'a' + i % 26 || t[1] != (unsigned char)src || t[2] != 'z')
            MT_FAIL("struct->packed record %d wrong", i);
    }
    /* Back: packed records into the padded struct array. */
    struct rec *back = mt_malloc((size_t)count * sizeof(struct rec));
    memset(back, 0xAB, (size_t)count * sizeof(struct rec));
    MT_MPI(MPI_Isend(raw, count, packedt, dest, 7, MPI_COMM_WORLD, &req));
    MT_MPI(MPI_Recv(back, count, rect, src, 7, MPI_COMM_WORLD, &st));
    MT_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    /* We forwarded what src sent us, so this came from src's src. */
    int ss = (src + mt_size - 1) % mt_size;
    for (int i = 0; i < count; i++) {
        if (back[i].id != val(ss, i) || back[i].x[0] != i * 0.5 ||
            back[i].x[1] != -ss - i * 0.25 || back[i].tag[2] != 'z')
            MT_FAIL("packed->struct record %d wrong", i);
        /* Padding between the fields must not be written. */
        const unsigned char *p = (const unsigned char *)&back[i];
        for (size_t o = offsetof(struct rec, id) + 4;
             o < offsetof(struct rec, x); o++)
            if (p[o] != 0xAB)
                MT_FAIL("padding after id written in record %d", i);
        for (size_t o = offsetof(struct rec, tag) + 3; o < sizeof(struct rec);
             o++)
            if (p[o] != 0xAB)
                MT_FAIL("tail padding written in record %d", i);
    }
    MT_MPI(MPI_Type_free(&t0));
    MT_MPI(MPI_Type_free(&rect));
    MT_MPI(MPI_Type_free(&packedt));
    free(recs);
    free(raw);
    free(back);
}

/* hvector of a contiguous type, byte strides, vs contiguous doubles. */
static void hvector_case(int count)
{
    MPI_Datatype pair, hv;
    MT_MPI(MPI_Type_contiguous(2, MPI_DOUBLE, &pair));
    MT_MPI(MPI_Type_create_hvector(count, 1, 40, pair, &hv));
    MT_MPI(MPI_Type_commit(&hv));
    double *sp = mt_malloc((size_t)count * 40);
    double *flat = mt_malloc((size_t)count * 2 * sizeof(double));
    for (int i = 0; i < count; i++) {
        sp[i * 5] = val(mt_rank, i);
        sp[i * 5 + 1] = -val(mt_rank, i);
    }
    MPI_Request req;
    MT_MPI(MPI_Isend(sp, 1, hv, dest, 8, MPI_COMM_WORLD, &req));
    MT_MPI(MPI_Recv(flat, count * 2, MPI_DOUBLE, src, 8, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    MT_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < count; i++)
        if (flat[2 * i] != val(src, i) || flat[2 * i + 1] != -val(src, i))
            MT_FAIL("hvector->contiguous pair %d", i);
    MT_MPI(MPI_Type_free(&hv));
    MT_MPI(MPI_Type_free(&pair));
    free(sp);
    free(flat);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    dest = (mt_rank + 1) % mt_size;
    src = (mt_rank + mt_size - 1) % mt_size;
    vector_case(1);
    vector_case(100);
    vector_case(120000); /* 1.4 MB of payload, 2.4 MB span */
    indexed_case(10);
    indexed_case(100000);
    struct_case(1);
    struct_case(50);
    struct_case(60000); /* 1.4 MB packed */
    hvector_case(10);
    hvector_case(80000);
    return mt_finish("dtype_wire");
}
