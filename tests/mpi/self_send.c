/* SPDX-License-Identifier: MIT */
/* Messages from a rank to itself, 0 bytes to 4 MiB: Isend-to-self then
 * Recv, Irecv-from-self then Send, Sendrecv and Sendrecv_replace with
 * self, a wildcard receive of a self message, Probe of one, Bsend to self,
 * and the same on MPI_COMM_SELF. Runs with any number of ranks, including
 * a singleton started without mpiexec. */
#include "mpitest.h"

static const int sizes[] = {
    0,    1,           8,           47,           48,     64,        1000,
    4096, 16 * MT_KIB, 64 * MT_KIB, 256 * MT_KIB, MT_MIB, 4 * MT_MIB};
#define NS ((int)(sizeof(sizes) / sizeof(sizes[0])))
#define MAXS (4 * MT_MIB)

static uint32_t seed_of(int phase, int i)
{
    return (uint32_t)(phase * 100 + i + mt_rank * 7919);
}

static void check_status(const MPI_Status *st, int src, int tag, int n,
                         const char *what)
{
    int c = -1;
    MT_EQ(st->MPI_SOURCE, src, what);
    MT_EQ(st->MPI_TAG, tag, what);
    MPI_Get_count(st, MPI_BYTE, &c);
    MT_EQ(c, n, what);
}

static void self_on(MPI_Comm comm, int me, int base)
{
    char *sb = mt_malloc(MAXS), *rb = mt_malloc(MAXS + 64);
    for (int i = 0; i < NS; i++) {
        int n = sizes[i];
        MPI_Request r, r2;
        MPI_Status st;

        /* Isend to self, then a blocking receive. */
        mt_fill(sb, (size_t)n, seed_of(base + 1, i));
        memset(rb + n, 0x42, 64);
        MT_MPI(MPI_Isend(sb, n, MPI_BYTE, me, i, comm, &r));
        MT_MPI(MPI_Recv(rb, MAXS, MPI_BYTE, me, i, comm, &st));
        MT_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
        check_status(&st, me, i, n, "Isend to self + Recv");
        MT_VERIFY(rb, (size_t)n, seed_of(base + 1, i), "Isend to self");
        MT_ALL(rb + n, 64, 0x42, "guard after self message");

        /* Irecv first, then a blocking Send into it. */
        mt_fill(sb, (size_t)n, seed_of(base + 2, i));
        MT_MPI(MPI_Irecv(rb, n, MPI_BYTE, me, 1000 + i, comm, &r));
        MT_MPI(MPI_Send(sb, n, MPI_BYTE, me, 1000 + i, comm));
        MT_MPI(MPI_Wait(&r, &st));
        check_status(&st, me, 1000 + i, n, "Irecv from self + Send");
        MT_VERIFY(rb, (size_t)n, seed_of(base + 2, i), "Send to self");

        /* Sendrecv with self. */
        mt_fill(sb, (size_t)n, seed_of(base + 3, i));
        MT_MPI(MPI_Sendrecv(sb, n, MPI_BYTE, me, 3, rb, n, MPI_BYTE, me, 3,
                            comm, &st));
        check_status(&st, me, 3, n, "Sendrecv with self");
        MT_VERIFY(rb, (size_t)n, seed_of(base + 3, i), "Sendrecv with self");

        /* Sendrecv_replace with self. */
        mt_fill(rb, (size_t)n, seed_of(base + 4, i));
        MT_MPI(MPI_Sendrecv_replace(rb, n, MPI_BYTE, me, 4, me, 4, comm, &st));
        check_status(&st, me, 4, n, "Sendrecv_replace with self");
        MT_VERIFY(rb, (size_t)n, seed_of(base + 4, i), "Sendrecv_replace");

        /* Two queued self messages, probed, then taken by wildcards. */
        mt_fill(sb, (size_t)n, seed_of(base + 5, i));
        MT_MPI(MPI_Isend(sb, n, MPI_BYTE, me, 5, comm, &r));
        MT_MPI(MPI_Isend(sb, n / 2, MPI_BYTE, me, 6, comm, &r2));
        MT_MPI(MPI_Probe(MPI_ANY_SOURCE, 6, comm, &st));
        check_status(&st, me, 6, n / 2, "Probe of a self message");
        MT_MPI(MPI_Recv(rb, MAXS, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm,
                        &st));
        check_status(&st, me, 5, n, "wildcard Recv of a self message");
        MT_VERIFY(rb, (size_t)n, seed_of(base + 5, i), "wildcard self");
        MT_MPI(MPI_Recv(rb, MAXS, MPI_BYTE, me, MPI_ANY_TAG, comm, &st));
        check_status(&st, me, 6, n / 2, "second self message");
        MT_VERIFY(rb, (size_t)(n / 2), seed_of(base + 5, i), "second self");
        MT_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
        MT_MPI(MPI_Wait(&r2, MPI_STATUS_IGNORE));
    }

    /* Buffered send to self: completes before the receive is posted. */
    int psz = 0;
    MT_MPI(MPI_Pack_size(1000, MPI_BYTE, comm, &psz));
    int asz = psz + MPI_BSEND_OVERHEAD;
    char *att = mt_malloc((size_t)asz);
    void *back;
    MT_MPI(MPI_Buffer_attach(att, asz));
    mt_fill(sb, 1000, seed_of(base + 6, 0));
    MT_MPI(MPI_Bsend(sb, 1000, MPI_BYTE, me, 7, comm));
    memset(sb, 0, 1000);
    MT_MPI(MPI_Recv(rb, 1000, MPI_BYTE, me, 7, comm, MPI_STATUS_IGNORE));
    MT_VERIFY(rb, 1000, seed_of(base + 6, 0), "Bsend to self");
    MT_MPI(MPI_Buffer_detach(&back, &asz));
    free(att);
    free(sb);
    free(rb);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    self_on(MPI_COMM_WORLD, mt_rank, 0);
    int self_rank = -1, self_size = -1;
    MT_MPI(MPI_Comm_rank(MPI_COMM_SELF, &self_rank));
    MT_MPI(MPI_Comm_size(MPI_COMM_SELF, &self_size));
    MT_EQ(self_rank, 0, "rank in MPI_COMM_SELF");
    MT_EQ(self_size, 1, "size of MPI_COMM_SELF");
    self_on(MPI_COMM_SELF, 0, 10);
    return mt_finish("self_send");
}
