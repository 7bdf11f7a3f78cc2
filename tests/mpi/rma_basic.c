/* SPDX-License-Identifier: MIT */
/* MPI_Put / MPI_Get on MPI_Win_allocate windows: fence epochs and
 * lock/unlock, contiguous and derived datatypes on either side (holes of
 * the target type untouched), sizes up to 1 MiB, and the error classes
 * MPI_ERR_RMA_RANGE (nothing written), MPI_ERR_RMA_SYNC and
 * MPI_ERR_LOCKTYPE under MPI_ERRORS_RETURN set on the window. */
#include "mpitest.h"

#define WBYTES (2 * MT_MIB)

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int me = mt_rank, n = mt_size;
    int right = (me + 1) % n, left = (me + n - 1) % n;
    unsigned char *mem;
    MPI_Win win;
    MT_MPI(
        MPI_Win_allocate(WBYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    unsigned char *buf = mt_malloc(WBYTES);

    /* Fence epochs: put to the right, then get from the left. */
    static const int sizes[] = {1,    7,     64,          1000,
                                4096, 65536, MT_MIB + 13, WBYTES};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        int sz = sizes[i];
        memset(mem, 0x5a, WBYTES);
        mt_fill(buf, (size_t)sz, (uint32_t)(me * 100 + i));
        MT_MPI(MPI_Win_fence(0, win));
        MT_MPI(
            MPI_Put(buf, sz, MPI_BYTE, right, WBYTES - sz, sz, MPI_BYTE, win));
        MT_MPI(MPI_Win_fence(0, win));
        MT_VERIFY(mem + WBYTES - sz, (size_t)sz, (uint32_t)(left * 100 + i),
                  "put under fence");
        MT_ALL(mem, WBYTES - sz, 0x5a, "bytes before the put");
        memset(buf, 0, (size_t)sz);
        MT_MPI(
            MPI_Get(buf, sz, MPI_BYTE, left, WBYTES - sz, sz, MPI_BYTE, win));
        MT_MPI(MPI_Win_fence(0, win));
        /* left's window holds what left-of-left put. */
        MT_VERIFY(buf, (size_t)sz, (uint32_t)(((left + n - 1) % n) * 100 + i),
                  "get under fence");
    }

    /* Derived types: 16 ints from a contiguous origin into a vector on the
     * target (blocks of 2 every 4 ints), and back. */
    MPI_Datatype vec;
    MT_MPI(MPI_Type_vector(8, 2, 4, MPI_INT, &vec));
    MT_MPI(MPI_Type_commit(&vec));
    int src[16], got[32];
    for (int i = 0; i < 16; i++)
        src[i] = me * 1000 + i;
    memset(mem, 0xff, 256);
    MT_MPI(MPI_Win_fence(0, win));
    MT_MPI(MPI_Put(src, 16, MPI_INT, right, 8, 1, vec, win));
    MT_MPI(MPI_Win_fence(0, win));
    const int *tm = (const int *)(mem + 8);
    for (int i = 0; i < 32; i++) {
        int want = (i % 4) < 2 ? left * 1000 + (i / 4) * 2 + i % 4 : -1;
        MT_EQ(tm[i], want, "vector target element");
    }
    MT_EQ(((int *)mem)[0], -1, "before the vector");
    MT_EQ(((int *)mem)[1], -1, "before the vector");
    /* Get right's vector into a vector origin (holes untouched). */
    for (int i = 0; i < 32; i++)
        got[i] = -7;
    MT_MPI(MPI_Get(got, 1, vec, right, 8, 1, vec, win));
    MT_MPI(MPI_Win_fence(0, win));
    for (int i = 0; i < 32; i++) {
        int want = (i % 4) < 2 ? me * 1000 + (i / 4) * 2 + i % 4 : -7;
        MT_EQ(got[i], want, "vector origin of a get");
    }
    MT_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MPI_Type_free(&vec);

    /* Lock/unlock: every rank writes its slot of rank 0's window under an
     * exclusive lock, then reads all slots under a shared lock. */
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    mt_fill(buf, 4096, (uint32_t)(7000 + me));
    MT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    MT_MPI(MPI_Put(buf, 4096, MPI_BYTE, 0, (MPI_Aint)me * 4096, 4096, MPI_BYTE,
                   win));
    MT_MPI(MPI_Win_flush(0, win));
    MT_MPI(MPI_Win_unlock(0, win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    for (int r = 0; r < n; r++) {
        MT_MPI(MPI_Get(buf, 4096, MPI_BYTE, 0, (MPI_Aint)r * 4096, 4096,
                       MPI_BYTE, win));
        MT_MPI(MPI_Win_flush_local(0, win));
        MT_VERIFY(buf, 4096, (uint32_t)(7000 + r), "slot read under lock");
    }
    MT_MPI(MPI_Win_unlock(0, win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* Errors, returned. */
    MT_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    memset(mem, 0x33, WBYTES);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_ERRCLASS(MPI_Put(buf, 8, MPI_BYTE, right, 0, 8, MPI_BYTE, win),
                MPI_ERR_RMA_SYNC, "put outside any epoch");
    MT_ERRCLASS(MPI_Win_unlock(right, win), MPI_ERR_RMA_SYNC,
                "unlock without lock");
    MT_ERRCLASS(MPI_Win_lock(12345, right, 0, win), MPI_ERR_LOCKTYPE,
                "bad lock type");
    MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    MT_ERRCLASS(
        MPI_Put(buf, 16, MPI_BYTE, right, WBYTES - 8, 16, MPI_BYTE, win),
        MPI_ERR_RMA_RANGE, "put past the end");
    MT_ERRCLASS(MPI_Get(buf, 16, MPI_BYTE, right, -4, 16, MPI_BYTE, win),
                MPI_ERR_RMA_RANGE, "get before the start");
    MT_ERRCLASS(MPI_Put(buf, 1, MPI_BYTE, n, 0, 1, MPI_BYTE, win), MPI_ERR_RANK,
                "target rank out of range");
    MT_MPI(MPI_Put(buf, 1, MPI_BYTE, MPI_PROC_NULL, 0, 1, MPI_BYTE, win));
    MT_ERRCLASS(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_ERR_RMA_SYNC,
                "lock twice");
    MT_MPI(MPI_Win_unlock(right, win));
    MT_ERRCLASS(MPI_Win_flush(right, win), MPI_ERR_RMA_SYNC,
                "flush without lock");
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_ALL(mem, WBYTES, 0x33, "window after refused operations");

    MT_MPI(MPI_Win_free(&win));
    free(buf);
    return mt_finish("rma_basic");
}
