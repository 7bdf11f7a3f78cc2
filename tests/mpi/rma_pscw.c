/* SPDX-License-Identifier: MIT */
/* General active target synchronisation (post/start/complete/wait/test):
 * a ring where every rank exposes its window to its left neighbour and
 * accesses its right one, many epochs in a row with new data each time;
 * then every rank puts into rank 0, which polls MPI_Win_test; operations
 * to a rank outside the access group are MPI_ERR_RMA_SYNC. */
#include "mpitest.h"

#define ITER 50
#define BYTES 4096

static MPI_Group group_of(MPI_Group world, int n, const int *ranks)
{
    MPI_Group g;
    MT_MPI(MPI_Group_incl(world, n, ranks, &g));
    return g;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int me = mt_rank, n = mt_size;
    int right = (me + 1) % n, left = (me + n - 1) % n;
    unsigned char *mem, *buf = mt_malloc(BYTES);
    MPI_Win win;
    MT_MPI(MPI_Win_allocate((MPI_Aint)BYTES * n, 1, MPI_INFO_NULL,
                            MPI_COMM_WORLD, &mem, &win));
    MPI_Group world, gl, gr;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    gl = group_of(world, 1, &left);
    gr = group_of(world, 1, &right);

    for (int it = 0; it < ITER; it++) {
        mt_fill(buf, BYTES, (uint32_t)(it * 1000 + me));
        MT_MPI(MPI_Win_post(gl, 0, win));
        MT_MPI(MPI_Win_start(gr, 0, win));
        MT_MPI(MPI_Put(buf, BYTES, MPI_BYTE, right, 0, BYTES, MPI_BYTE, win));
        MT_MPI(MPI_Win_complete(win));
        MT_MPI(MPI_Win_wait(win));
        MT_VERIFY(mem, BYTES, (uint32_t)(it * 1000 + left), "ring epoch");
    }

    /* All to rank 0, which tests for completion. */
    int zero = 0;
    MPI_Group g0 = group_of(world, 1, &zero), others;
    MPI_Group_excl(world, 1, &zero, &others);
    for (int it = 0; it < 5; it++) {
        if (me == 0) {
            if (n > 1) {
                MT_MPI(MPI_Win_post(others, 0, win));
                int flag = 0;
                while (!flag)
                    MT_MPI(MPI_Win_test(win, &flag));
                for (int r = 1; r < n; r++)
                    MT_VERIFY(mem + (size_t)r * BYTES, BYTES,
                              (uint32_t)(77 + it * 10 + r),
                              "put into rank 0's exposure epoch");
            }
        } else {
            mt_fill(buf, BYTES, (uint32_t)(77 + it * 10 + me));
            MT_MPI(MPI_Win_start(g0, 0, win));
            MT_MPI(MPI_Put(buf, BYTES, MPI_BYTE, 0, (MPI_Aint)me * BYTES, BYTES,
                           MPI_BYTE, win));
            MT_MPI(MPI_Win_complete(win));
        }
    }

    /* Errors. */
    MT_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MT_ERRCLASS(MPI_Win_complete(win), MPI_ERR_RMA_SYNC,
                "complete without start");
    MT_ERRCLASS(MPI_Win_wait(win), MPI_ERR_RMA_SYNC, "wait without post");
    if (n > 2) {
        MT_MPI(MPI_Win_post(gl, 0, win));
        MT_MPI(MPI_Win_start(gr, 0, win));
        MT_ERRCLASS(MPI_Put(buf, 1, MPI_BYTE, left, 0, 1, MPI_BYTE, win),
                    MPI_ERR_RMA_SYNC, "put outside the access group");
        MT_MPI(MPI_Win_complete(win));
        MT_MPI(MPI_Win_wait(win));
    }
    MPI_Group_free(&gl);
    MPI_Group_free(&gr);
    MPI_Group_free(&g0);
    MPI_Group_free(&others);
    MPI_Group_free(&world);
    MT_MPI(MPI_Win_free(&win));
    free(buf);
    return mt_finish("rma_pscw");
}
