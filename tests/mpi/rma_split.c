/* SPDX-License-Identifier: MIT */
/* Large puts and gets on windows of user memory (Win_create; `--dynamic`:
 * Win_create_dynamic + Win_attach), which Ferry copies with the target's
 * help when the target is inside MPI (src/rma/ho.c, "split copies"):
 * 1. every origin puts blocks of sizes around FERRY_RMA_SPLIT_MIN (and
 *    odd ones, not a multiple of any chunk) at an odd offset of rank 0's
 *    window and gets them back into a buffer with guard bytes, while rank
 *    0 waits in MPI_Barrier; it also gets a block rank 0 wrote itself.
 *    Rank 0 then checks every block and the guard bytes between them;
 * 2. the same while rank 0 computes outside MPI until every origin is
 *    done (the origins copy everything themselves);
 * 3. on Ferry, with a single-copy mechanism, the split enabled and no
 *    more ranks than cores: rank 1 repeats a 1 MiB put while rank 0 waits
 *    in MPI_Recv until rank 0's counter ferry_rma_helped_bytes moves, so
 *    the shared path is known to run (not just the origin's fallback). */
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpitest.h"

#define MAXLEN (2 * MT_MIB + 4097)
#define SLOT (MAXLEN + 2) /* a guard byte each side */

static const int sizes[] = {1000, 262143, 262144, MT_MIB + 3, MAXLEN};
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))

static long load(const long *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* Origin side of phases 1 and 2: put, get back, check, into slot 'slot'
 * of rank 0's window (at window offset 'at'); and a get of rank 0's own
 * block at 'src'. */
static void origin_pass(MPI_Win win, MPI_Aint at, MPI_Aint src,
                        unsigned char *buf, unsigned char *back, uint32_t tag)
{
    int me = mt_rank;
    MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    for (int s = 0; s < NSIZES; s++) {
        int len = sizes[s];
        uint32_t seed = tag + (uint32_t)(me * 100 + s);
        mt_fill(buf, (size_t)len, seed);
        MT_MPI(MPI_Put(buf, len, MPI_BYTE, 0, at + 1, len, MPI_BYTE, win));
        MT_MPI(MPI_Win_flush(0, win));
        memset(back, 0x5a, (size_t)len + 2);
        MT_MPI(MPI_Get(back + 1, len, MPI_BYTE, 0, at + 1, len, MPI_BYTE, win));
        MT_MPI(MPI_Win_flush(0, win));
        MT_EQ((int)back[0], 0x5a, "local guard byte before a get");
        MT_VERIFY(back + 1, (size_t)len, seed, "block read back");
        MT_EQ((int)back[len + 1], 0x5a, "local guard byte after a get");
        memset(back, 0x5a, (size_t)len + 2);
        MT_MPI(
            MPI_Get(back + 1, len, MPI_BYTE, 0, src + 1, len, MPI_BYTE, win));
        MT_MPI(MPI_Win_flush(0, win));
        MT_VERIFY(back + 1, (size_t)len, tag + 7u, "rank 0's own block");
        MT_EQ((int)back[len + 1], 0x5a, "local guard byte after a get");
    }
    MT_MPI(MPI_Win_unlock(0, win));
}

/* Rank 0 after a phase: every origin's last block and the guards. */
static void check_slots(const unsigned char *mem, uint32_t tag)
{
    for (int r = 1; r < mt_size; r++) {
        const unsigned char *b = mem + (size_t)SLOT * (size_t)r;
        MT_EQ((int)b[0], 0, "guard byte before a block");
        MT_VERIFY(b + 1, MAXLEN, tag + (uint32_t)(r * 100 + NSIZES - 1),
                  "last block");
        MT_EQ((int)b[MAXLEN + 1], 0, "guard byte after a block");
    }
}

/* Whether this run can show the shared path: Ferry (its counter exists),
 * a single-copy mechanism, the hand-over and the split on, every rank on
 * its own core (a target that shares a core sleeps instead of serving). */
static bool split_expected(int *pvar)
{
    const char *x = getenv("FERRY_XFER"), *am = getenv("FERRY_RMA_AM_MAX"),
               *sp = getenv("FERRY_RMA_SPLIT_MIN"),
               *rm = getenv("FERRY_RMA_REMAP");
    if ((x && strcmp(x, "cma") && strcmp(x, "procmem")) ||
        (rm && strcmp(rm, "0") && (!x || !strcmp(x, "auto"))) ||
        (am && !strcmp(am, "0")) || (sp && !strcmp(sp, "0")) ||
        mt_size > sysconf(_SC_NPROCESSORS_ONLN))
        return false;
    int provided;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return false;
    if (MPI_T_pvar_get_index("ferry_rma_helped_bytes", MPI_T_PVAR_CLASS_COUNTER,
                             pvar) != MPI_SUCCESS) {
        MPI_T_finalize();
        return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    /* Windows on user memory Ferry can move onto shared pages are reached
     * by loads and stores (src/rma/remap.c), never by split copies: keep
     * them on user memory unless the run asks otherwise (a variant runs
     * the checks on moved pages too). */
    setenv("FERRY_RMA_REMAP", "0", 0);
    mt_init(&argc, &argv);
    int me = mt_rank, n = mt_size;
    bool dynamic = argc > 1 && !strcmp(argv[1], "--dynamic");
    /* Rank 0's window: a slot per origin (slot 0: rank 0's own block). */
    size_t bytes = me == 0 ? (size_t)SLOT * (size_t)n : 0;
    unsigned char *mem = me == 0 ? mt_malloc(bytes) : NULL;
    if (me == 0)
        memset(mem, 0, bytes);
    MPI_Win win;
    MPI_Aint base = 0;
    if (dynamic) {
        MT_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        if (me == 0) {
            MT_MPI(MPI_Win_attach(win, mem, (MPI_Aint)bytes));
            MT_MPI(MPI_Get_address(mem, &base));
        }
        MT_MPI(MPI_Bcast(&base, 1, MPI_AINT, 0, MPI_COMM_WORLD));
    } else {
        MT_MPI(MPI_Win_create(mem, (MPI_Aint)bytes, 1, MPI_INFO_NULL,
                              MPI_COMM_WORLD, &win));
    }
    MPI_Aint at = base + (MPI_Aint)SLOT * me, src = base;
    unsigned char *buf = mt_malloc(MAXLEN), *back = mt_malloc(MAXLEN + 2);

    /* ---- 1. the target waits in MPI_Barrier ---- */
    if (me == 0)
        mt_fill(mem + 1, MAXLEN, 1000u + 7u);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (me != 0)
        origin_pass(win, at, src, buf, back, 1000u);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) {
        check_slots(mem, 1000u);
        MT_VERIFY(mem + 1, MAXLEN, 1000u + 7u, "rank 0's block after gets");
    }

    /* ---- 2. the target computes outside MPI ---- */
    long *done = mt_malloc(sizeof(long));
    *done = 0;
    MPI_Win flag;
    MT_MPI(MPI_Win_create(done, me == 0 ? (MPI_Aint)sizeof(long) : 0,
                          sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &flag));
    if (me == 0) {
        memset(mem, 0, bytes);
        mt_fill(mem + 1, MAXLEN, 2000u + 7u);
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) {
        unsigned long spins = 0;
        while (load(done) < n - 1)
            if (++spins % 64 == 0)
                sched_yield();
    } else {
        origin_pass(win, at, src, buf, back, 2000u);
        long one = 1;
        MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, flag));
        MT_MPI(MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM,
                              flag));
        MT_MPI(MPI_Win_unlock(0, flag));
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        check_slots(mem, 2000u);
    MT_MPI(MPI_Win_free(&flag));

    /* ---- 3. the shared path runs ---- */
    int pvar = -1, expect = split_expected(&pvar);
    MT_MPI(MPI_Allreduce(MPI_IN_PLACE, &expect, 1, MPI_INT, MPI_MIN,
                         MPI_COMM_WORLD));
    if (expect && me <= 1) {
        MPI_T_pvar_session ses;
        MPI_T_pvar_handle h;
        int cnt;
        MT_MPI(MPI_T_pvar_session_create(&ses));
        MT_MPI(MPI_T_pvar_handle_alloc(ses, pvar, NULL, &h, &cnt));
        unsigned long long helped = 0;
        int more = 1;
        if (me == 1)
            MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        for (int i = 0; i < 2000 && more; i++) {
            if (me == 1) {
                mt_fill(buf, MT_MIB, (uint32_t)i);
                MT_MPI(MPI_Put(buf, MT_MIB, MPI_BYTE, 0, at + 1, MT_MIB,
                               MPI_BYTE, win));
                MT_MPI(MPI_Win_flush(0, win));
                MT_MPI(MPI_Send(&i, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
                MT_MPI(MPI_Recv(&more, 1, MPI_INT, 0, 2, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
            } else {
                int got;
                MT_MPI(MPI_Recv(&got, 1, MPI_INT, 1, 1, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
                MT_VERIFY(mem + SLOT + 1, MT_MIB, (uint32_t)got, "1 MiB put");
                MT_MPI(MPI_T_pvar_read(ses, h, &helped));
                more = helped == 0;
                MT_MPI(MPI_Send(&more, 1, MPI_INT, 1, 2, MPI_COMM_WORLD));
            }
        }
        if (me == 1)
            MT_MPI(MPI_Win_unlock(0, win));
        if (me == 0)
            MT_CHECK(helped > 0,
                     "rank 0 helped with none of 2000 puts of 1 MiB while "
                     "waiting in MPI_Recv");
        MT_MPI(MPI_T_pvar_handle_free(ses, &h));
        MT_MPI(MPI_T_pvar_session_free(&ses));
    }
    if (pvar >= 0)
        MPI_T_finalize();

    if (dynamic && me == 0)
        MT_MPI(MPI_Win_detach(win, mem));
    MT_MPI(MPI_Win_free(&win));
    free(mem);
    free(buf);
    free(back);
    free(done);
    return mt_finish("rma_split");
}
