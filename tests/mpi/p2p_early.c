/* SPDX-License-Identifier: MIT */
/* Early senders and simultaneous exchanges of large messages: the sender
 * starts a 4 MiB send before the receiver has posted (the receiver posts
 * after a barrier, or after first receiving a small token on another tag),
 * both directions at once through Isend/Irecv and through Sendrecv, and
 * blocking Send/Recv head to head in an order that is deadlock-free under
 * MPI semantics (no reliance on buffering). */
#include "mpitest.h"

#define BIG (4 * MT_MIB)

static uint32_t seed_of(int phase, int src, int k)
{
    return (uint32_t)(phase * 1000 + src * 10 + k);
}

/* Isend 4 MiB, barrier, then the receiver posts: the whole message must
 * wait at (or be pulled from) the sender. Three messages queued at once. */
static void early_barrier(int dest, int src)
{
    char *sb[3], *rb = mt_malloc(BIG);
    MPI_Request req[3];
    for (int k = 0; k < 3; k++) {
        sb[k] = mt_malloc(BIG);
        mt_fill(sb[k], BIG, seed_of(1, mt_rank, k));
        MT_MPI(
            MPI_Isend(sb[k], BIG, MPI_BYTE, dest, 7, MPI_COMM_WORLD, &req[k]));
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int k = 0; k < 3; k++) {
        MPI_Status st;
        int c = -1;
        MT_MPI(MPI_Recv(rb, BIG, MPI_BYTE, src, 7, MPI_COMM_WORLD, &st));
        MPI_Get_count(&st, MPI_BYTE, &c);
        MT_EQ(c, BIG, "early 4 MiB count");
        MT_VERIFY(rb, BIG, seed_of(1, src, k), "early 4 MiB after barrier");
    }
    MT_MPI(MPI_Waitall(3, req, MPI_STATUSES_IGNORE));
    for (int k = 0; k < 3; k++)
        free(sb[k]);
    free(rb);
}

/* Isend 4 MiB on tag 1, then a small token on tag 2. The receiver takes the
 * token first (it overtakes legitimately: different tag) and only then
 * posts the large receive, so the large send is known to be early. */
static void early_token(int dest, int src)
{
    char *sb = mt_malloc(BIG), *rb = mt_malloc(BIG);
    int tok = mt_rank, got = -1;
    MPI_Request req[2];
    mt_fill(sb, BIG, seed_of(2, mt_rank, 0));
    MT_MPI(MPI_Isend(sb, BIG, MPI_BYTE, dest, 1, MPI_COMM_WORLD, &req[0]));
    MT_MPI(MPI_Isend(&tok, 1, MPI_INT, dest, 2, MPI_COMM_WORLD, &req[1]));
    MT_MPI(
        MPI_Recv(&got, 1, MPI_INT, src, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MT_EQ(got, src, "token");
    MT_MPI(
        MPI_Recv(rb, BIG, MPI_BYTE, src, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MT_VERIFY(rb, BIG, seed_of(2, src, 0), "4 MiB received after token");
    MT_MPI(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    free(sb);
    free(rb);
}

/* Both directions at once: Irecv + Isend (in both posting orders), then
 * Sendrecv. Every rank sends to dest and receives from src concurrently. */
static void exchange(int dest, int src)
{
    static const int sz[] = {BIG, MT_MIB, 64 * MT_KIB, 1000};
    char *sb = mt_malloc(BIG), *rb = mt_malloc(BIG);
    for (int i = 0; i < 4; i++) {
        MPI_Request req[2];
        MPI_Status st[2];
        int n = sz[i], c = -1;
        mt_fill(sb, (size_t)n, seed_of(3, mt_rank, i));
        if (i % 2 == 0) {
            MT_MPI(MPI_Irecv(rb, n, MPI_BYTE, src, 3, MPI_COMM_WORLD, &req[0]));
            MT_MPI(
                MPI_Isend(sb, n, MPI_BYTE, dest, 3, MPI_COMM_WORLD, &req[1]));
        } else {
            MT_MPI(
                MPI_Isend(sb, n, MPI_BYTE, dest, 3, MPI_COMM_WORLD, &req[1]));
            MT_MPI(MPI_Irecv(rb, n, MPI_BYTE, src, 3, MPI_COMM_WORLD, &req[0]));
        }
        MT_MPI(MPI_Waitall(2, req, st));
        MPI_Get_count(&st[0], MPI_BYTE, &c);
        MT_EQ(c, n, "Isend/Irecv exchange count");
        MT_EQ(st[0].MPI_SOURCE, src, "exchange source");
        MT_VERIFY(rb, (size_t)n, seed_of(3, src, i), "Isend/Irecv exchange");

        mt_fill(sb, (size_t)n, seed_of(4, mt_rank, i));
        MT_MPI(MPI_Sendrecv(sb, n, MPI_BYTE, dest, 4, rb, n, MPI_BYTE, src, 4,
                            MPI_COMM_WORLD, &st[0]));
        MPI_Get_count(&st[0], MPI_BYTE, &c);
        MT_EQ(c, n, "Sendrecv count");
        MT_VERIFY(rb, (size_t)n, seed_of(4, src, i), "Sendrecv exchange");
    }
    free(sb);
    free(rb);
}

/* Blocking head-to-head within pairs (0,1), (2,3): the lower rank sends
 * first, the upper receives first, then they swap roles. The unpaired rank
 * of an odd-sized job sits this one out. */
static void head_to_head(void)
{
    int partner = mt_rank ^ 1;
    if (partner >= mt_size)
        return;
    char *sb = mt_malloc(BIG), *rb = mt_malloc(BIG);
    static const int sz[] = {BIG, MT_MIB, 16 * MT_KIB};
    for (int i = 0; i < 3; i++) {
        int n = sz[i];
        mt_fill(sb, (size_t)n, seed_of(5, mt_rank, i));
        if (mt_rank < partner) {
            MT_MPI(MPI_Send(sb, n, MPI_BYTE, partner, 5, MPI_COMM_WORLD));
            MT_MPI(MPI_Recv(rb, n, MPI_BYTE, partner, 5, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
        } else {
            MT_MPI(MPI_Recv(rb, n, MPI_BYTE, partner, 5, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            MT_MPI(MPI_Send(sb, n, MPI_BYTE, partner, 5, MPI_COMM_WORLD));
        }
        MT_VERIFY(rb, (size_t)n, seed_of(5, partner, i), "head-to-head");
    }
    free(sb);
    free(rb);
}

/* Rank 1 waits in MPI_Recv for a small message (it takes the mailbox)
 * that rank 0 sends back to back with a larger one on another tag (it
 * takes a cell). When the receive finds the cell first, taking it hands
 * the small one up first, as unexpected (pair order): the receive must
 * still match it. The receive must look at the mailbox just before the
 * small one lands and at the cells just after the larger one did, so
 * many rounds. */
static void mailbox_then_cell(void)
{
    enum { ROUNDS = 20000, SMALL = 4, LARGE = 2048 };
    /* At most about this long (rank 1 decides and tells rank 0 with each
     * token): where ranks outnumber cores while each believes it has one
     * (two "hosts" of Hydra on one machine), every round waits for the
     * scheduler. 20000 rounds take 0.15 s with a core each. */
    const double budget = 0.5;
    char small[SMALL], *large = mt_malloc(LARGE);
    double t0 = MPI_Wtime();
    for (int i = 0, go = 1; go && mt_rank < 2; i++) {
        if (mt_rank == 0) {
            MT_MPI(MPI_Recv(&go, 1, MPI_INT, 1, 30, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            mt_fill(small, SMALL, (uint32_t)i);
            mt_fill(large, LARGE, (uint32_t)i + 1);
            MT_MPI(MPI_Send(small, SMALL, MPI_BYTE, 1, 31, MPI_COMM_WORLD));
            MT_MPI(MPI_Send(large, LARGE, MPI_BYTE, 1, 32, MPI_COMM_WORLD));
        } else {
            go = i + 1 < ROUNDS && MPI_Wtime() - t0 < budget;
            MT_MPI(MPI_Send(&go, 1, MPI_INT, 0, 30, MPI_COMM_WORLD));
            MT_MPI(MPI_Recv(small, SMALL, MPI_BYTE, 0, 31, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            MT_VERIFY(small, SMALL, (uint32_t)i, "small before a cell");
            MT_MPI(MPI_Recv(large, LARGE, MPI_BYTE, 0, 32, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            MT_VERIFY(large, LARGE, (uint32_t)i + 1, "cell after the small");
        }
    }
    free(large);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MT_CHECK(mt_size >= 2, "needs at least 2 ranks");
    int dest = (mt_rank + 1) % mt_size, src = (mt_rank + mt_size - 1) % mt_size;
    early_barrier(dest, src);
    early_token(dest, src);
    exchange(dest, src);
    /* Reverse ring too: with 3+ ranks every rank now talks to both
     * neighbours in both directions. */
    exchange(src, dest);
    head_to_head();
    mailbox_then_cell();
    return mt_finish("p2p_early");
}
