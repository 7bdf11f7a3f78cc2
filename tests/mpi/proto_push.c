/* SPDX-License-Identifier: MIT */
/* Push-Pull (FERRY_PROTO, FERRY_BTP, FERRY_BTP1, FERRY_PUSH_BUF): early
 * and late receivers at sizes around the pushed part (below, at and above
 * BTP, across a cell, several pieces), probe of a pushed message (the full
 * size), truncation (nothing past the buffer), non-contiguous receives,
 * synchronous sends, and many late messages at once (past the pushed
 * buffer's budget). Pairs (0,1), (2,3)...; an odd last rank idles. Run
 * under every FERRY_PROTO setting by the suite. */
#include <stdbool.h>

#include "mpitest.h"

static const size_t sizes[] = {4097,          8191,    16 * 1024,
                               16 * 1024 + 1, 40000,   64 * 1024,
                               100001,        1 << 20, 5 * MT_MIB + 3};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static int partner(void)
{
    int p = mt_rank ^ 1;
    return p < mt_size ? p : MPI_PROC_NULL;
}

/* Early receiver: the receive is posted, then a token tells the sender to
 * go. Late receiver: the sender sends, then the token tells the receiver
 * the message is on its way; it waits a little before receiving. */
static void early_late(int peer, bool early)
{
    bool sender = mt_rank % 2 == 0;
    for (size_t i = 0; i < NSIZES; i++) {
        size_t n = sizes[i];
        uint32_t seed = (uint32_t)(i * 7 + early);
        char *b = mt_malloc(n);
        int tok = 0;
        if (sender) {
            mt_fill(b, n, seed);
            if (early)
                MT_MPI(MPI_Recv(&tok, 1, MPI_INT, peer, 99, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
            /* Nonblocking: a send that is not wholly pushed completes
             * only once received, and the token must go first. */
            MPI_Request rq;
            MT_MPI(
                MPI_Isend(b, (int)n, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &rq));
            if (!early)
                MT_MPI(MPI_Send(&tok, 1, MPI_INT, peer, 99, MPI_COMM_WORLD));
            MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        } else {
            memset(b, 0, n);
            MPI_Status st;
            int c = -1;
            if (early) {
                MPI_Request rq;
                MT_MPI(MPI_Irecv(b, (int)n, MPI_BYTE, peer, 5, MPI_COMM_WORLD,
                                 &rq));
                MT_MPI(MPI_Send(&tok, 1, MPI_INT, peer, 99, MPI_COMM_WORLD));
                MT_MPI(MPI_Wait(&rq, &st));
            } else {
                MT_MPI(MPI_Recv(&tok, 1, MPI_INT, peer, 99, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
                /* Let the pushed bytes arrive first. */
                int flag = 0;
                while (!flag)
                    MT_MPI(MPI_Iprobe(peer, 5, MPI_COMM_WORLD, &flag, &st));
                MPI_Get_count(&st, MPI_BYTE, &c);
                MT_EQ(c, n, "probe of a pushed message: the full size");
                MT_MPI(MPI_Recv(b, (int)n, MPI_BYTE, peer, 5, MPI_COMM_WORLD,
                                &st));
            }
            MPI_Get_count(&st, MPI_BYTE, &c);
            MT_EQ(c, n, early ? "early receiver count" : "late receiver count");
            MT_VERIFY(b, n, seed, early ? "early receiver" : "late receiver");
        }
        free(b);
    }
}

/* A receive smaller than the message: MPI_ERR_TRUNCATE, the buffer's
 * first bytes right, nothing written past it. Early and late. */
static void truncation(int peer)
{
    const size_t n = 200000;
    const size_t caps[] = {1000, 16 * 1024 - 5, 20000, 150000};
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
        for (int early = 0; early < 2; early++) {
            uint32_t seed = (uint32_t)(100 + i * 2 + early);
            int tok = 0;
            if (mt_rank % 2 == 0) {
                char *b = mt_malloc(n);
                mt_fill(b, n, seed);
                MT_MPI(MPI_Recv(&tok, 1, MPI_INT, peer, 98, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
                int rc = MPI_Send(b, (int)n, MPI_BYTE, peer, 6, MPI_COMM_WORLD);
                (void)rc; /* the sender may or may not see the error */
                MT_MPI(MPI_Recv(&tok, 1, MPI_INT, peer, 98, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
                free(b);
                continue;
            }
            size_t cap = caps[i];
            char *b = mt_malloc(cap + 4096);
            memset(b, 0xA5, cap + 4096);
            MPI_Request rq;
            MPI_Status st;
            if (early)
                MT_MPI(MPI_Irecv(b, (int)cap, MPI_BYTE, peer, 6, MPI_COMM_WORLD,
                                 &rq));
            MT_MPI(MPI_Send(&tok, 1, MPI_INT, peer, 98, MPI_COMM_WORLD));
            int rc;
            if (early) {
                rc = MPI_Wait(&rq, &st);
            } else {
                int flag = 0;
                while (!flag)
                    MT_MPI(MPI_Iprobe(peer, 6, MPI_COMM_WORLD, &flag,
                                      MPI_STATUS_IGNORE));
                rc = MPI_Recv(b, (int)cap, MPI_BYTE, peer, 6, MPI_COMM_WORLD,
                              &st);
            }
            MT_ERRCLASS(rc, MPI_ERR_TRUNCATE, "truncated pushed message");
            MT_VERIFY(b, cap, seed, "truncated receive's bytes");
            MT_ALL(b + cap, 4096, 0xA5, "guard after a truncated receive");
            MT_MPI(MPI_Send(&tok, 1, MPI_INT, peer, 98, MPI_COMM_WORLD));
            free(b);
        }
    }
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* Many late messages at once (more pushed bytes than the default budget
 * holds with a small FERRY_PUSH_BUF), received in reverse tag order into
 * a strided datatype, then synchronous sends. */
static void many_late(int peer)
{
    enum { K = 24, N = 48 * 1024 };
    if (mt_rank % 2 == 0) {
        MPI_Request rq[K];
        char *b = mt_malloc((size_t)K * N);
        for (int k = 0; k < K; k++) {
            mt_fill(b + (size_t)k * N, N, 300u + (uint32_t)k);
            MT_MPI(MPI_Isend(b + (size_t)k * N, N, MPI_BYTE, peer, k,
                             MPI_COMM_WORLD, &rq[k]));
        }
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        MT_MPI(MPI_Waitall(K, rq, MPI_STATUSES_IGNORE));
        for (int k = 0; k < 4; k++)
            MT_MPI(MPI_Ssend(b + (size_t)k * N, N, MPI_BYTE, peer, 50 + k,
                             MPI_COMM_WORLD));
        free(b);
        return;
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    /* Every other 1 KiB block of a 2 KiB stride. */
    MPI_Datatype vec;
    MT_MPI(MPI_Type_vector(N / 1024, 1024, 2048, MPI_BYTE, &vec));
    MT_MPI(MPI_Type_commit(&vec));
    char *v = mt_malloc(2 * N), *flat = mt_malloc(N);
    for (int k = K - 1; k >= 0; k--) {
        if (k % 3 == 0) {
            memset(v, 0, 2 * N);
            MT_MPI(MPI_Recv(v, 1, vec, peer, k, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            for (int j = 0; j < N / 1024; j++)
                memcpy(flat + j * 1024, v + j * 2048, 1024);
        } else {
            MT_MPI(MPI_Recv(flat, N, MPI_BYTE, peer, k, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
        }
        MT_VERIFY(flat, N, 300u + (uint32_t)k, "late message, reverse order");
    }
    for (int k = 0; k < 4; k++) {
        MT_MPI(MPI_Recv(flat, N, MPI_BYTE, peer, 50 + k, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        MT_VERIFY(flat, N, 300u + (uint32_t)k, "synchronous pushed send");
    }
    MPI_Type_free(&vec);
    free(v);
    free(flat);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int peer = partner();
    if (peer != MPI_PROC_NULL) {
        early_late(peer, true);
        early_late(peer, false);
        truncation(peer);
    }
    if (peer != MPI_PROC_NULL)
        many_late(peer);
    else
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    return mt_finish("proto_push");
}
