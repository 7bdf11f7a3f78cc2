/* SPDX-License-Identifier: MIT */
/* MPI_Probe and MPI_Iprobe: the probed status gives the size of the next
 * matching message (0 bytes to 4 MiB), a receive of exactly that size then
 * gets it, probes do not consume messages, a probe for a specific tag skips
 * earlier messages with other tags, and MPI_ANY_SOURCE probes respect each
 * sender's order. */
#include "mpitest.h"

static const int sizes[] = {0, 47, 4096, 64 * MT_KIB, MT_MIB, 4 * MT_MIB};
#define NS ((int)(sizeof(sizes) / sizeof(sizes[0])))

static uint32_t seed_of(int src, int tag)
{
    return (uint32_t)(src * 97 + tag);
}

/* All non-root ranks send every size to root (tag = index); root probes with
 * MPI_ANY_SOURCE/MPI_ANY_TAG, allocates what the probe says, receives. */
static void probe_any(int root)
{
    if (mt_rank != root) {
        MPI_Request req[NS];
        char *sb[NS];
        for (int i = 0; i < NS; i++) {
            sb[i] = mt_malloc((size_t)sizes[i]);
            mt_fill(sb[i], (size_t)sizes[i], seed_of(mt_rank, i));
            MT_MPI(MPI_Isend(sb[i], sizes[i], MPI_BYTE, root, i, MPI_COMM_WORLD,
                             &req[i]));
        }
        MT_MPI(MPI_Waitall(NS, req, MPI_STATUSES_IGNORE));
        for (int i = 0; i < NS; i++)
            free(sb[i]);
        return;
    }
    int *next = calloc((size_t)mt_size, sizeof(int));
    for (int k = 0; k < (mt_size - 1) * NS; k++) {
        MPI_Status st, st2, rst;
        int bytes = -1, bytes2 = -1, got = -1;
        MT_MPI(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        int s = st.MPI_SOURCE;
        MT_CHECK(s >= 0 && s < mt_size && s != root, "probe source %d", s);
        MT_EQ(st.MPI_TAG, next[s], "probed tag follows the sender's order");
        MPI_Get_count(&st, MPI_BYTE, &bytes);
        MT_EQ(bytes, sizes[st.MPI_TAG], "probed size");
        /* A second, specific probe sees the same message: probes do not
         * consume. */
        MT_MPI(MPI_Probe(s, st.MPI_TAG, MPI_COMM_WORLD, &st2));
        MPI_Get_count(&st2, MPI_BYTE, &bytes2);
        MT_EQ(bytes2, bytes, "second probe size");
        char *rb = mt_malloc((size_t)bytes + 16);
        memset(rb + bytes, 0x3C, 16);
        MT_MPI(
            MPI_Recv(rb, bytes, MPI_BYTE, s, st.MPI_TAG, MPI_COMM_WORLD, &rst));
        MPI_Get_count(&rst, MPI_BYTE, &got);
        MT_EQ(got, bytes, "received size equals probed size");
        MT_EQ(rst.MPI_SOURCE, s, "received source");
        MT_VERIFY(rb, (size_t)bytes, seed_of(s, st.MPI_TAG), "probed message");
        MT_ALL(rb + bytes, 16, 0x3C, "guard after exact-size buffer");
        free(rb);
        next[s]++;
    }
    free(next);
}

/* Ring: each rank sends a small tag-1 message, then a 1 MiB tag-2 message.
 * The receiver Iprobes (polling) for tag 2 first, receives it, then probes
 * tag 1. Iprobe for a tag nobody sends must report nothing. */
static void probe_selective(void)
{
    int dest = (mt_rank + 1) % mt_size, src = (mt_rank + mt_size - 1) % mt_size;
    char small[100], *big = mt_malloc(MT_MIB), *rb = mt_malloc(MT_MIB);
    MPI_Request req[2];
    MPI_Status st;
    int flag = 0, bytes = -1;

    mt_fill(small, sizeof small, seed_of(mt_rank, 1));
    mt_fill(big, MT_MIB, seed_of(mt_rank, 2));
    MT_MPI(MPI_Isend(small, sizeof small, MPI_BYTE, dest, 1, MPI_COMM_WORLD,
                     &req[0]));
    MT_MPI(MPI_Isend(big, MT_MIB, MPI_BYTE, dest, 2, MPI_COMM_WORLD, &req[1]));

    while (!flag) {
        MT_MPI(MPI_Iprobe(src, 2, MPI_COMM_WORLD, &flag, &st));
    }
    MT_EQ(st.MPI_SOURCE, src, "Iprobe source");
    MT_EQ(st.MPI_TAG, 2, "Iprobe tag");
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    MT_EQ(bytes, MT_MIB, "Iprobe size of the large message");
    MT_MPI(MPI_Recv(rb, bytes, MPI_BYTE, src, 2, MPI_COMM_WORLD, &st));
    MT_VERIFY(rb, MT_MIB, seed_of(src, 2), "large after Iprobe");

    MT_MPI(MPI_Probe(src, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    MT_EQ(st.MPI_TAG, 1, "remaining message is tag 1");
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    MT_EQ(bytes, (int)sizeof small, "tag 1 size");
    MT_MPI(MPI_Recv(rb, bytes, MPI_BYTE, src, 1, MPI_COMM_WORLD, &st));
    MT_VERIFY(rb, sizeof small, seed_of(src, 1), "small after Probe");

    flag = 1;
    MT_MPI(MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, &st));
    MT_EQ(flag, 0, "Iprobe for a tag nobody sent");
    MT_MPI(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    free(big);
    free(rb);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MT_CHECK(mt_size >= 2, "needs at least 2 ranks");
    probe_any(0);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    probe_any(mt_size - 1);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    probe_selective();
    return mt_finish("p2p_probe");
}
