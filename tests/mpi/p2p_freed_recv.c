/* SPDX-License-Identifier: MIT */
/* Receives the program freed while active (MPI_Request_free) complete in
 * MPI_Finalize, even when their messages are sent only after the receiver
 * has entered it: ranks pair up (odd rank 2k+1 receives from 2k; with an
 * odd number of ranks the last one only takes part), each receiver posts a 1
 * MiB receive from its partner, a 64-byte one from it and a 64-byte
 * MPI_ANY_SOURCE one, frees all three and calls MPI_Finalize at once; its
 * partner sends the three messages 100 ms later (the large one with a blocking
 * MPI_Send, which returned only if the receive was not cancelled). After
 * MPI_Finalize the receiver checks every byte. (MPICH's test suite,
 * pt2pt/rqfree, found Ferry cancelling such receives: the sender then waited
 * forever.) */
#include <stdbool.h>
#include <time.h>

#include "mpitest.h"

enum { BIG = 1 << 20, SMALL = 64 };

static unsigned char pattern(int which, size_t i)
{
    return (unsigned char)(which * 31 + (int)(i * 7 % 251));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int partner = mt_rank ^ 1;
    bool receiver = mt_rank % 2 == 1, sender = !receiver && partner < mt_size;
    unsigned char *big = mt_malloc(BIG), small[2][SMALL];
    memset(big, 0, BIG);
    memset(small, 0, sizeof(small));
    if (receiver) {
        MPI_Request r[3];
        MT_MPI(
            MPI_Irecv(big, BIG, MPI_BYTE, partner, 1, MPI_COMM_WORLD, &r[0]));
        MT_MPI(MPI_Irecv(small[0], SMALL, MPI_BYTE, partner, 2, MPI_COMM_WORLD,
                         &r[1]));
        MT_MPI(MPI_Irecv(small[1], SMALL, MPI_BYTE, MPI_ANY_SOURCE, 3,
                         MPI_COMM_WORLD, &r[2]));
        for (int i = 0; i < 3; i++) {
            MT_MPI(MPI_Request_free(&r[i]));
            MT_CHECK(r[i] == MPI_REQUEST_NULL, "a freed request is null");
        }
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (sender) {
        struct timespec nap = {0, 100 * 1000 * 1000};
        nanosleep(&nap, NULL);
        for (size_t i = 0; i < BIG; i++)
            big[i] = pattern(0, i);
        for (int k = 0; k < 2; k++)
            for (size_t i = 0; i < SMALL; i++)
                small[k][i] = pattern(k + 1, i);
        MT_MPI(MPI_Send(small[1], SMALL, MPI_BYTE, partner, 3, MPI_COMM_WORLD));
        MT_MPI(MPI_Send(big, BIG, MPI_BYTE, partner, 1, MPI_COMM_WORLD));
        MT_MPI(MPI_Send(small[0], SMALL, MPI_BYTE, partner, 2, MPI_COMM_WORLD));
    }
    MT_MPI(MPI_Finalize());
    if (receiver) {
        for (size_t i = 0; i < BIG; i++)
            if (big[i] != pattern(0, i)) {
                fprintf(stderr,
                        "rank %d: byte %zu of the 1 MiB message is %d\n",
                        mt_rank, i, big[i]);
                return 1;
            }
        for (int k = 0; k < 2; k++)
            for (size_t i = 0; i < SMALL; i++)
                if (small[k][i] != pattern(k + 1, i)) {
                    fprintf(stderr, "rank %d: byte %zu of small message %d\n",
                            mt_rank, i, k);
                    return 1;
                }
    }
    if (mt_rank == 0) {
        /* Rank 0 sends and so returns from its MPI_Send only once rank 1
         * has taken the message; rank 1 checks it after MPI_Finalize. */
        printf("p2p_freed_recv: OK (%d ranks)\n", mt_size);
        fflush(stdout);
    }
    free(big);
    return 0;
}
