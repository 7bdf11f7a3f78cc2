/* SPDX-License-Identifier: MIT */
/* Windows on user memory: MPI_Win_create over malloc'd buffers (put/get
 * with fence and locks, derived target types with holes untouched,
 * accumulate and fetch-and-op from every rank, MPI_ERR_RMA_RANGE), and
 * MPI_Win_create_dynamic with MPI_Win_attach/detach (absolute
 * displacements from MPI_Get_address; outside every attached region, or
 * after detach, is MPI_ERR_RMA_RANGE). The data moves by CMA or
 * /proc/<pid>/mem; a machine that forbids both makes the test skip. */
#include "mpitest.h"

#define WB (256 * 1024)

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int me = mt_rank, n = mt_size;
    int right = (me + 1) % n, left = (me + n - 1) % n;
    unsigned char *mem = mt_malloc(WB), *buf = mt_malloc(WB);
    memset(mem, 0x11, WB);
    MPI_Win win;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Win_create(mem, WB, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    if (rc != MPI_SUCCESS) {
        int cls;
        MPI_Error_class(rc, &cls);
        MT_EQ(cls, MPI_ERR_WIN, "Win_create refused");
        if (me == 0)
            printf("rma_create: SKIP (ranks cannot reach each other's "
                   "memory here)\n");
        return mt_finish("rma_create");
    }
    int flavor_ok = 0;
    int *fl;
    MT_MPI(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fl, &flavor_ok));
    MT_EQ(*fl, MPI_WIN_FLAVOR_CREATE, "flavor");

    static const int sizes[] = {1, 100, 4096, 70000, WB};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        int sz = sizes[i];
        mt_fill(buf, (size_t)sz, (uint32_t)(me * 10 + i));
        MT_MPI(MPI_Win_fence(0, win));
        MT_MPI(MPI_Put(buf, sz, MPI_BYTE, right, WB - sz, sz, MPI_BYTE, win));
        MT_MPI(MPI_Win_fence(0, win));
        MT_VERIFY(mem + WB - sz, (size_t)sz, (uint32_t)(left * 10 + i),
                  "put into user memory");
        memset(buf, 0, (size_t)sz);
        MT_MPI(MPI_Get(buf, sz, MPI_BYTE, left, WB - sz, sz, MPI_BYTE, win));
        MT_MPI(MPI_Win_fence(0, win));
        MT_VERIFY(buf, (size_t)sz, (uint32_t)(((left + n - 1) % n) * 10 + i),
                  "get from user memory");
        MT_MPI(MPI_Win_fence(0, win));
        memset(mem, 0x11, WB);
    }
    /* Vector target: blocks of 3 ints every 5. */
    MPI_Datatype vec;
    MT_MPI(MPI_Type_vector(10, 3, 5, MPI_INT, &vec));
    MT_MPI(MPI_Type_commit(&vec));
    int src[30];
    for (int i = 0; i < 30; i++)
        src[i] = me * 100 + i;
    MT_MPI(MPI_Win_fence(0, win));
    MT_MPI(MPI_Put(src, 30, MPI_INT, right, 0, 1, vec, win));
    MT_MPI(MPI_Win_fence(0, win));
    int *im = (int *)mem, hole;
    memset(&hole, 0x11, sizeof hole);
    for (int i = 0; i < 50; i++) {
        int want = i % 5 < 3 ? left * 100 + (i / 5) * 3 + i % 5 : hole;
        MT_EQ(im[i], want, "vector put into user memory");
    }
    MPI_Type_free(&vec);

    /* Accumulate and fetch-and-op from everyone into rank 0. */
    long *lm = (long *)(mem + 4096);
    MT_MPI(MPI_Win_fence(0, win));
    memset(lm, 0, 16 * sizeof(long));
    MT_MPI(MPI_Win_fence(0, win));
    long v[16], one = 1, got;
    for (int i = 0; i < 16; i++)
        v[i] = me + i;
    MT_MPI(MPI_Win_lock_all(0, win));
    for (int rep = 0; rep < 20; rep++) {
        MT_MPI(MPI_Accumulate(v, 15, MPI_LONG, 0, 4096, 15, MPI_LONG, MPI_SUM,
                              win));
        MT_MPI(MPI_Fetch_and_op(&one, &got, MPI_LONG, 0, 4096 + 15 * 8, MPI_SUM,
                                win));
    }
    MT_MPI(MPI_Win_unlock_all(win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) {
        for (int i = 0; i < 15; i++)
            MT_EQ(lm[i], 20L * ((long)n * (n - 1) / 2 + (long)n * i),
                  "accumulated into user memory");
        MT_EQ(lm[15], 20L * n, "fetch-and-op counter in user memory");
    }
    /* Get_accumulate of 40 longs (more than Ferry stages on the stack):
     * every old value a multiple of 1 below the final count. */
    long *gm = (long *)(mem + 8192), add[40], old40[40];
    MT_MPI(MPI_Win_fence(0, win));
    memset(gm, 0, sizeof(add));
    MT_MPI(MPI_Win_fence(0, win));
    for (int i = 0; i < 40; i++)
        add[i] = i + 1;
    MT_MPI(MPI_Win_lock_all(0, win));
    for (int rep = 0; rep < 10; rep++) {
        MT_MPI(MPI_Get_accumulate(add, 40, MPI_LONG, old40, 40, MPI_LONG, 0,
                                  8192, 40, MPI_LONG, MPI_SUM, win));
        MT_MPI(MPI_Win_flush(0, win));
        for (int i = 0; i < 40; i++)
            MT_CHECK(old40[i] % (i + 1) == 0 && old40[i] / (i + 1) < 10L * n,
                     "get_accumulate old value %ld at %d", old40[i], i);
    }
    MT_MPI(MPI_Win_unlock_all(win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        for (int i = 0; i < 40; i++)
            MT_EQ(gm[i], 10L * n * (i + 1), "get_accumulate into user memory");
    MT_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    MT_ERRCLASS(MPI_Put(buf, 2, MPI_BYTE, right, WB - 1, 2, MPI_BYTE, win),
                MPI_ERR_RMA_RANGE, "put past user memory");
    /* A result of zero bytes needs no buffer (MPICH's badrma). */
    MPI_Datatype none;
    MT_MPI(MPI_Type_contiguous(0, MPI_INT, &none));
    MT_MPI(MPI_Type_commit(&none));
    MT_MPI(MPI_Get_accumulate(&one, 1, none, NULL, 1, none, right, 4096, 1,
                              none, MPI_SUM, win));
    MT_ERRCLASS(MPI_Get_accumulate(&one, 1, MPI_LONG, NULL, 1, MPI_LONG, right,
                                   4096, 1, MPI_LONG, MPI_SUM, win),
                MPI_ERR_BUFFER, "get_accumulate into a NULL result");
    MPI_Type_free(&none);
    MT_MPI(MPI_Win_unlock(right, win));
    /* MPI 4.0 12.2.3: any flavour may be queried; memory not reachable by
     * load/store reads as size 0 and NULL (MPICH's win_shared_query). */
    MPI_Aint qsz;
    int qdu;
    unsigned char *qb;
    MT_MPI(MPI_Win_shared_query(win, me, &qsz, &qdu, &qb));
    MT_CHECK(qsz == WB && qb == mem && qdu == 1, "shared_query of my memory");
    MT_MPI(MPI_Win_shared_query(win, right, &qsz, &qdu, &qb));
    MT_CHECK((qsz == 0 && qb == NULL) || (qsz == WB && qb != NULL),
             "shared_query of a peer: size %ld", (long)qsz);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_MPI(MPI_Win_free(&win));

    /* Dynamic window. */
    MT_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MT_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    unsigned char *reg = mt_malloc(8192);
    memset(reg, 0x22, 8192);
    MT_MPI(MPI_Win_attach(win, reg, 8192));
    MPI_Aint addr, *addrs = mt_malloc(sizeof(MPI_Aint) * (size_t)n);
    MT_MPI(MPI_Get_address(reg, &addr));
    MT_MPI(
        MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
    mt_fill(buf, 1000, (uint32_t)(900 + me));
    /* A target on another node checks a dynamic window's accesses
     * itself: its verdict on a put comes with the unlock. */
    int near = mt_same_node(right);
    MT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    MT_MPI(MPI_Put(buf, 1000, MPI_BYTE, right, addrs[right] + 100, 1000,
                   MPI_BYTE, win));
    int prc = MPI_Put(buf, 16, MPI_BYTE, right, addrs[right] + 8190, 16,
                      MPI_BYTE, win);
    if (near || prc != MPI_SUCCESS)
        MT_ERRCLASS(prc, MPI_ERR_RMA_RANGE, "put past an attached region");
    if (near || prc != MPI_SUCCESS)
        MT_MPI(MPI_Win_unlock(right, win));
    else
        MT_ERRCLASS(MPI_Win_unlock(right, win), MPI_ERR_RMA_RANGE,
                    "unlock after a put past a remote attached region");
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_VERIFY(reg + 100, 1000, (uint32_t)(900 + left), "put to dynamic");
    MT_ALL(reg, 100, 0x22, "before the dynamic put");
    MT_ALL(reg + 1100, 8192 - 1100, 0x22, "after the dynamic put");
    MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win));
    MT_MPI(MPI_Get(buf, 1000, MPI_BYTE, left, addrs[left] + 100, 1000, MPI_BYTE,
                   win));
    MT_MPI(MPI_Win_unlock(left, win));
    MT_VERIFY(buf, 1000, (uint32_t)(900 + (left + n - 1) % n),
              "get from dynamic");
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_MPI(MPI_Win_detach(win, reg));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    MT_ERRCLASS(
        MPI_Get(buf, 1, MPI_BYTE, right, addrs[right], 1, MPI_BYTE, win),
        MPI_ERR_RMA_RANGE, "get from a detached region");
    MT_MPI(MPI_Win_unlock(right, win));
    MT_ERRCLASS(MPI_Win_detach(win, reg), MPI_ERR_RMA_ATTACH, "detach twice");
    MT_MPI(MPI_Win_free(&win));
    free(reg);
    free(mem);
    /* Many regions (more than a window slot carries: origins read the
     * table from the target), attached out of order; an access may span
     * regions that adjoin (MPICH's window_attach, linked_list_bench_*,
     * win_dynamic_rma_flush_get -count=9216). */
    enum { NR = 300, RS = 64 };
    MT_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MT_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    unsigned char *many = mt_malloc(NR * RS);
    memset(many, 0x33, NR * RS);
    for (int i = 0; i < NR; i++) /* 7 and NR coprime: every region once */
        MT_MPI(MPI_Win_attach(win, many + (size_t)(i * 7 % NR) * RS, RS));
    MT_ERRCLASS(MPI_Win_attach(win, many + 10, RS), MPI_ERR_RMA_ATTACH,
                "attach overlapping an attached region");
    MT_MPI(MPI_Win_shared_query(win, right, &qsz, &qdu, &qb));
    MT_CHECK(qsz == 0 && qb == NULL, "shared_query of a dynamic window");
    MT_MPI(MPI_Get_address(many, &addr));
    MT_MPI(
        MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
    unsigned char *out = mt_malloc(NR * RS);
    mt_fill(out, NR * RS, (uint32_t)(700 + me));
    MT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    MT_MPI(MPI_Put(out, NR * RS, MPI_BYTE, right, addrs[right], NR * RS,
                   MPI_BYTE, win));
    MT_MPI(MPI_Win_unlock(right, win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_VERIFY(many, NR * RS, (uint32_t)(700 + left), "put across 300 regions");
    /* A gap in the middle: accesses across it are refused. */
    MT_MPI(MPI_Win_detach(win, many + 150 * RS));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    unsigned char *ref = mt_malloc(NR * RS);
    memcpy(ref, out, NR * RS);
    memset(out, 0, NR * RS);
    MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    /* Refused by the origin, or (active messages: a table this large is
     * the target's to check) by the target, reported at the unlock. */
    rc = MPI_Put(ref, 3 * RS, MPI_BYTE, right, addrs[right] + 149 * RS, 3 * RS,
                 MPI_BYTE, win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_unlock(right, win);
    else
        MT_MPI(MPI_Win_unlock(right, win));
    MT_ERRCLASS(rc, MPI_ERR_RMA_RANGE, "put across a detached region");
    MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    MT_MPI(MPI_Get(out, 149 * RS, MPI_BYTE, right, addrs[right], 149 * RS,
                   MPI_BYTE, win));
    MT_MPI(MPI_Get(out + 151 * RS, 149 * RS, MPI_BYTE, right,
                   addrs[right] + 151 * RS, 149 * RS, MPI_BYTE, win));
    MT_MPI(MPI_Win_unlock(right, win));
    MT_CHECK(memcmp(out, ref, 149 * RS) == 0, "get below the gap");
    MT_CHECK(memcmp(out + 151 * RS, ref + 151 * RS, 149 * RS) == 0,
             "get above the gap");
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_VERIFY(many, NR * RS, (uint32_t)(700 + left),
              "a refused put wrote nothing");
    for (int i = 0; i < NR; i++)
        if (i != 150)
            MT_MPI(MPI_Win_detach(win, many + (size_t)i * RS));
    MT_ERRCLASS(MPI_Win_detach(win, many), MPI_ERR_RMA_ATTACH,
                "detach of a detached region");
    MT_MPI(MPI_Win_free(&win));
    free(many);
    free(out);
    free(ref);
    free(addrs);
    free(buf);
    return mt_finish("rma_create");
}
