/* SPDX-License-Identifier: MIT */
/* Random MPI-IO file views against a model of the file: each round, from
 * a seed every rank shares, a tile of T ints whose ints are dealt out to
 * the ranks at random (every rank owns at least one; some ints nobody
 * owns, holes), each rank's filetype its ints of the tile (indexed,
 * resized to the tile), a displacement, and per rank a count of ints, an
 * offset into its view, a memory layout (plain ints or a random derived
 * datatype, tests/mpi/dtype_gen.h) and a way to write: File_write_at,
 * write_at_all, iwrite_at, iwrite_at_all, or seek then write / write_all
 * / iwrite. After sync-barrier-sync every rank reads the whole file
 * through a plain view and compares it with the model, every int written
 * (MPI leaves the bytes nobody wrote undefined: ROMIO's and OMPIO's
 * collective writes leave garbage in the holes below the end of the
 * file, Ferry zeros), then reads its own ints back through its view
 * into another random layout (read_at_all or seek + read), whose holes
 * and guards must stay untouched. --rounds N (default 40), --seed S. */
#include <unistd.h>

#include "dtype_gen.h"

enum { MAXT = 96, MAXINTS = 1 << 17 };

static uint64_t s_seed = 1;
static int s_rounds = 40;

static int32_t val(uint32_t round, int rank, long k)
{
    return (int32_t)((uint32_t)k * 2654435761u ^ round * 40503u ^
                     (uint32_t)(rank + 1) * 0x9e3779b9u) |
           1; /* never 0: the model's mark of an int nobody wrote */
}

struct plan {
    long count, off; /* ints written; offset into the view, in ints */
};

/* A memory layout of n ints: a random derived type when it lays them out
 * without overlap, else plain ints. */
static struct dg_type *mem_type(long n, long *count, long **off, long *lo,
                                long *hi)
{
    struct dg_type *t =
        n > 0 && dg_rnd(0, 1) ? dg_gen((int)dg_rnd(1, 3)) : NULL;
    if (t && n % t->n == 0) {
        long *o = dg_offsets(t, n / t->n, lo, hi);
        if (*hi - *lo <= 32L << 20 && dg_disjoint(o, n)) {
            *count = n / t->n;
            *off = o;
            return t;
        }
        free(o);
    }
    if (t)
        dg_free(t);
    *count = n;
    *off = mt_malloc(sizeof(long) * (size_t)(n ? n : 1));
    for (long i = 0; i < n; i++)
        (*off)[i] = 4 * i;
    *lo = 0;
    *hi = 4 * n;
    return NULL;
}

static void one_round(MPI_File fh, uint32_t round)
{
    dg_rng = s_seed * 0x100000001b3ull ^ round;
    int P = mt_size;
    /* The tile: int j belongs to owner[j] (-1: a hole). */
    int T = (int)dg_rnd(P, MAXT), owner[MAXT];
    for (int j = 0; j < T; j++)
        owner[j] = dg_rnd(0, 5) == 0 ? -1 : (int)dg_rnd(0, P - 1);
    /* Everyone owns one at least: rank r the int at perm[r] of a random
     * permutation. */
    int perm[MAXT];
    for (int j = 0; j < T; j++)
        perm[j] = j;
    for (int j = T - 1; j > 0; j--) {
        int k = (int)dg_rnd(0, j), x = perm[j];
        perm[j] = perm[k];
        perm[k] = x;
    }
    for (int r = 0; r < P; r++)
        owner[perm[r]] = r;
    long disp = 4 * dg_rnd(0, 16);
    /* The calls, the same on every rank (some are collective). */
    int how = (int)dg_rnd(0, 6), rhow = (int)dg_rnd(0, 1);
    struct plan pl[64];
    for (int r = 0; r < P; r++) {
        pl[r].count = dg_rnd(0, 3) ? dg_rnd(0, 200) : dg_rnd(0, MAXINTS);
        pl[r].off = dg_rnd(0, 40);
    }
    /* Our filetype: our ints of the tile, the tile's extent. */
    int own[MAXT], nown = 0;
    for (int j = 0; j < T; j++)
        if (owner[j] == mt_rank)
            own[nown++] = j;
    int bl[MAXT];
    for (int i = 0; i < nown; i++)
        bl[i] = 1;
    MPI_Datatype idx, ftype;
    MT_MPI(MPI_Type_indexed(nown, bl, own, MPI_INT, &idx));
    MT_MPI(MPI_Type_create_resized(idx, 0, 4L * T, &ftype));
    MT_MPI(MPI_Type_commit(&ftype));
    MT_MPI(MPI_Type_free(&idx));

    /* The model: every rank's writes, int by int. */
    long fints = disp / 4;
    for (int r = 0; r < P; r++) {
        int nr = 0;
        for (int j = 0; j < T; j++)
            nr += owner[j] == r;
        if (pl[r].count > 0) {
            long last = pl[r].off + pl[r].count - 1;
            long end = disp / 4 + (last / nr) * T + T;
            if (end > fints)
                fints = end;
        }
    }
    int32_t *model = calloc((size_t)fints + 1, sizeof(int32_t));
    MT_CHECK(model, "out of memory");
    long fsize = 0; /* bytes: up to the last int written */
    for (int r = 0; r < P; r++) {
        int rown[MAXT], rn = 0;
        for (int j = 0; j < T; j++)
            if (owner[j] == r)
                rown[rn++] = j;
        for (long k = 0; k < pl[r].count; k++) {
            long pos = pl[r].off + k;
            long at = disp / 4 + (pos / rn) * T + rown[pos % rn];
            model[at] = val(round, r, k);
            if (4 * (at + 1) > fsize)
                fsize = 4 * (at + 1);
        }
    }

    /* Write ours. */
    MT_MPI(MPI_File_set_size(fh, 0));
    MT_MPI(
        MPI_File_set_view(fh, disp, MPI_INT, ftype, "native", MPI_INFO_NULL));
    struct plan *me = &pl[mt_rank];
    long mcount, *moff, lo, hi;
    struct dg_type *mt = mem_type(me->count, &mcount, &moff, &lo, &hi);
    MPI_Datatype mdt = mt ? mt->dt : MPI_INT;
    struct dg_buf b = dg_buf_new(lo, hi);
    for (long k = 0; k < me->count; k++) {
        int32_t v = val(round, mt_rank, k);
        memcpy(b.base + moff[k], &v, 4);
    }
    MPI_Status st;
    MPI_Request rq;
    int c = (int)mcount, got = -1;
    switch (how) {
    case 0:
        MT_MPI(MPI_File_write_at(fh, me->off, b.base, c, mdt, &st));
        break;
    case 1:
        MT_MPI(MPI_File_write_at_all(fh, me->off, b.base, c, mdt, &st));
        break;
    case 2:
        MT_MPI(MPI_File_iwrite_at(fh, me->off, b.base, c, mdt, &rq));
        MT_MPI(MPI_Wait(&rq, &st));
        break;
    case 3:
        MT_MPI(MPI_File_iwrite_at_all(fh, me->off, b.base, c, mdt, &rq));
        MT_MPI(MPI_Wait(&rq, &st));
        break;
    case 4:
        MT_MPI(MPI_File_seek(fh, me->off, MPI_SEEK_SET));
        MT_MPI(MPI_File_write(fh, b.base, c, mdt, &st));
        break;
    case 5:
        MT_MPI(MPI_File_seek(fh, me->off, MPI_SEEK_SET));
        MT_MPI(MPI_File_write_all(fh, b.base, c, mdt, &st));
        break;
    default:
        MT_MPI(MPI_File_seek(fh, me->off, MPI_SEEK_SET));
        MT_MPI(MPI_File_iwrite(fh, b.base, c, mdt, &rq));
        MT_MPI(MPI_Wait(&rq, &st));
        break;
    }
    MT_MPI(MPI_Get_elements(&st, MPI_INT, &got));
    MT_EQ(got, me->count, "ints written");
    MT_MPI(MPI_File_sync(fh));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_MPI(MPI_File_sync(fh));

    /* The whole file through a plain view. */
    char ctx[160];
    snprintf(ctx, sizeof ctx,
             "round %u (tile %d ints, disp %ld; we wrote %ld ints at %ld by "
             "call %d%s)",
             round, T, disp, me->count, me->off, how,
             mt ? ", memory typed" : "");
    MPI_Offset size = -1;
    MT_MPI(MPI_File_get_size(fh, &size));
    MT_EQ(size, fsize, ctx);
    MT_MPI(
        MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    int32_t *whole = mt_malloc((size_t)fsize + 4);
    MT_MPI(MPI_File_read_at(fh, 0, whole, (int)fsize, MPI_BYTE, &st));
    MT_MPI(MPI_Get_count(&st, MPI_BYTE, &got));
    MT_EQ(got, fsize, "bytes read of the whole file");
    for (long i = 0; i < fsize / 4; i++)
        if (model[i] != 0 && whole[i] != model[i])
            MT_FAIL("%s: file int %ld is %d, expected %d (owner %d)", ctx, i,
                    whole[i], model[i],
                    i < disp / 4 ? -1 : owner[(i - disp / 4) % T]);

    /* Our ints back through our view, into another layout. */
    MT_MPI(
        MPI_File_set_view(fh, disp, MPI_INT, ftype, "native", MPI_INFO_NULL));
    long rcount, *roff, rlo, rhi;
    struct dg_type *rt = mem_type(me->count, &rcount, &roff, &rlo, &rhi);
    struct dg_buf r = dg_buf_new(rlo, rhi);
    if (rhow == 0) {
        MT_MPI(MPI_File_read_at_all(fh, me->off, r.base, (int)rcount,
                                    rt ? rt->dt : MPI_INT, &st));
    } else {
        MT_MPI(MPI_File_seek(fh, me->off, MPI_SEEK_SET));
        MT_MPI(
            MPI_File_read(fh, r.base, (int)rcount, rt ? rt->dt : MPI_INT, &st));
    }
    MT_MPI(MPI_Get_elements(&st, MPI_INT, &got));
    MT_EQ(got, me->count, "ints read back");
    for (long k = 0; k < me->count; k++) {
        int32_t v;
        memcpy(&v, r.base + roff[k], 4);
        if (v != val(round, mt_rank, k))
            MT_FAIL("%s: int %ld read back is %d, expected %d", ctx, k, v,
                    val(round, mt_rank, k));
        memset(r.base + roff[k], 0xEE, 4);
    }
    MT_ALL(r.mem, r.len, 0xEE, ctx);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));

    free(whole);
    free(model);
    free(b.mem);
    free(r.mem);
    free(moff);
    free(roff);
    if (mt)
        dg_free(mt);
    if (rt)
        dg_free(rt);
    MT_MPI(MPI_Type_free(&ftype));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    for (int i = 1; i < argc; i++)
        if (!dg_common_opt(argc, argv, &i, &s_rounds, &s_seed))
            MT_FAIL("usage: io_random [--rounds N] [--seed S]");
    MT_CHECK(mt_size <= 64, "at most 64 ranks");
    /* One file in a directory of rank 0's, removed at the end. */
    char dir[256] = "", path[300];
    if (mt_rank == 0) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/io_random.XXXXXX", tmp ? tmp : "/tmp");
        MT_CHECK(mkdtemp(dir), "mkdtemp");
    }
    MT_MPI(MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD));
    snprintf(path, sizeof path, "%s/f", dir);
    MPI_File fh;
    MT_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                         MPI_INFO_NULL, &fh));
    for (int r = 0; r < s_rounds; r++)
        one_round(fh, (uint32_t)r);
    MT_MPI(MPI_File_close(&fh));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0) {
        unlink(path);
        rmdir(dir);
    }
    return mt_finish("io_random");
}
