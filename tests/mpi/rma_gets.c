/* SPDX-License-Identifier: MIT */
/* Gets that return before their bytes are in: to a rank of another node
 * (FERRY_NODES, Hydra's two hosts) a get that one request covers waits in
 * the batch with puts and is answered with the rest of its batch in one
 * write, a large one overlaps (rma/am.c); every one lands by the next
 * synchronisation. Checked byte for byte, from the next rank (a ring: no
 * two origins share a target), on Win_allocate and Win_create windows:
 * - gets of sizes from 1 byte to past the direct threshold (64 KiB) at
 *   scattered offsets, and more 8-byte ones than may be in flight at once,
 *   all awaited by one flush;
 * - gets into a vector origin type freed right after the call (the
 *   pending get holds it): every other byte written, the others not;
 * - a get as the first operation of an exclusive epoch (the lock travels
 *   with it), and a put, flush, get of the same bytes (the get sees the
 *   put);
 * - gets to every rank under lock_all, and between fences. */
#include "mpitest.h"

#define WIN (256 * 1024)
#define SCRATCH (WIN - 8192) /* [SCRATCH, WIN): written by test_order */
#define NSMALL 300

static int me, np;

static unsigned char pat(int rank, size_t i)
{
    return (unsigned char)(rank * 131 + i * 7 + (i >> 8));
}

static void check_bytes(const unsigned char *got, int rank, size_t off,
                        size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != pat(rank, off + i)) {
            MT_CHECK(0,
                     "%s: byte %zu of %zu (offset %zu) from rank %d is %d, "
                     "want %d",
                     what, i, n, off, rank, got[i], pat(rank, off + i));
            return;
        }
}

static void test_sizes(MPI_Win win, int t)
{
    static const size_t sizes[] = {
        1,    2,    3,    7,     8,     13,    64,    100,   255,   1000,
        4095, 4096, 4097, 16384, 16385, 40000, 65535, 65536, 70000, 131072};
    enum { NS = sizeof(sizes) / sizeof(sizes[0]) };
    size_t total = 0;
    for (int k = 0; k < NS; k++)
        total += sizes[k];
    unsigned char *out = mt_malloc(total);
    unsigned char *small = mt_malloc(NSMALL * 8);
    size_t offs[NS], smoff[NSMALL];
    MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
    size_t at = 0;
    for (int k = 0; k < NS; k++) {
        offs[k] = ((size_t)k * 9973) % (SCRATCH - sizes[k]);
        MT_MPI(MPI_Get(out + at, (int)sizes[k], MPI_BYTE, t, (MPI_Aint)offs[k],
                       (int)sizes[k], MPI_BYTE, win));
        at += sizes[k];
    }
    for (int k = 0; k < NSMALL; k++) {
        smoff[k] = ((size_t)k * 7919 + 5) % (SCRATCH - 8);
        MT_MPI(MPI_Get(small + 8 * k, 8, MPI_BYTE, t, (MPI_Aint)smoff[k], 8,
                       MPI_BYTE, win));
    }
    MT_MPI(MPI_Win_flush(t, win));
    at = 0;
    for (int k = 0; k < NS; k++) {
        check_bytes(out + at, t, offs[k], sizes[k], "sized get");
        at += sizes[k];
    }
    for (int k = 0; k < NSMALL; k++)
        check_bytes(small + 8 * k, t, smoff[k], 8, "8-byte get");

    /* Into every other byte, through a type freed at once: one request,
     * and one past the direct threshold. */
    static const int vn[2] = {3000, 20000};
    unsigned char *sparse[2];
    for (int v = 0; v < 2; v++) {
        sparse[v] = mt_malloc(2 * (size_t)vn[v]);
        memset(sparse[v], 0xee, 2 * (size_t)vn[v]);
        MPI_Datatype vec;
        MT_MPI(MPI_Type_vector(vn[v], 1, 2, MPI_BYTE, &vec));
        MT_MPI(MPI_Type_commit(&vec));
        MT_MPI(MPI_Get(sparse[v], 1, vec, t, 777, vn[v], MPI_BYTE, win));
        MT_MPI(MPI_Type_free(&vec));
    }
    MT_MPI(MPI_Win_unlock(t, win));
    for (int v = 0; v < 2; v++) {
        for (int i = 0; i < vn[v]; i++) {
            MT_EQ(sparse[v][2 * i], pat(t, 777 + (size_t)i),
                  "vector get, byte");
            MT_EQ(sparse[v][2 * i + 1], 0xee, "vector get, gap untouched");
        }
        free(sparse[v]);
    }
    free(small);
    free(out);
}

static void test_order(MPI_Win win, int t)
{
    unsigned char first[16], put[300], got[300];
    MT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
    MT_MPI(MPI_Get(first, 16, MPI_BYTE, t, 40, 16, MPI_BYTE, win));
    for (int i = 0; i < 300; i++)
        put[i] = (unsigned char)(me * 17 + i);
    MT_MPI(MPI_Put(put, 300, MPI_BYTE, t, SCRATCH + 100, 300, MPI_BYTE, win));
    MT_MPI(MPI_Win_flush(t, win));
    MT_MPI(MPI_Get(got, 300, MPI_BYTE, t, SCRATCH + 100, 300, MPI_BYTE, win));
    MT_MPI(MPI_Win_unlock(t, win));
    check_bytes(first, t, 40, 16, "first get of an exclusive epoch");
    MT_CHECK(!memcmp(got, put, 300), "a get after a put and flush sees it");
}

static void test_all(MPI_Win win)
{
    unsigned char *got = mt_malloc((size_t)np * 32);
    MT_MPI(MPI_Win_lock_all(0, win));
    for (int r = 0; r < np; r++)
        MT_MPI(MPI_Get(got + 32 * r, 32, MPI_BYTE, r, (MPI_Aint)me * 32, 32,
                       MPI_BYTE, win));
    MT_MPI(MPI_Win_unlock_all(win));
    for (int r = 0; r < np; r++)
        check_bytes(got + 32 * r, r, (size_t)me * 32, 32, "lock_all get");
    memset(got, 0, (size_t)np * 32);
    MT_MPI(MPI_Win_fence(0, win));
    for (int r = 0; r < np; r++)
        MT_MPI(MPI_Get(got + 32 * r, 32, MPI_BYTE, r, 4096 + (MPI_Aint)me * 32,
                       32, MPI_BYTE, win));
    MT_MPI(MPI_Win_fence(0, win));
    for (int r = 0; r < np; r++)
        check_bytes(got + 32 * r, r, 4096 + (size_t)me * 32, 32, "fence get");
    free(got);
}

static void run(unsigned char *mem, MPI_Win win)
{
    MT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
    for (size_t i = 0; i < WIN; i++)
        mem[i] = pat(me, i);
    MT_MPI(MPI_Win_unlock(me, win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int t = (me + 1) % np;
    test_sizes(win, t);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    test_order(win, t);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    test_all(win);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    me = mt_rank;
    np = mt_size;
    unsigned char *mem;
    MPI_Win win;
    MT_MPI(MPI_Win_allocate(WIN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    run(mem, win);
    MT_MPI(MPI_Win_free(&win));

    unsigned char *own = mt_malloc(WIN);
    MT_MPI(MPI_Win_create(own, WIN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    run(own, win);
    MT_MPI(MPI_Win_free(&win));
    free(own);
    return mt_finish("rma_gets");
}
