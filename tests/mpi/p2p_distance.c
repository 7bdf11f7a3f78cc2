/* SPDX-License-Identifier: MIT */
/* Messages between buffers whose addresses differ by a slow distance
 * (destination 1-31 bytes past the source modulo 4096, util/copy.h): the
 * copies the library makes for them (cells, pushed buffers, cma bounced
 * through scratch, collectives' staging) must be byte-exact with nothing
 * written around the receive buffer, at every size class (mailbox, cells,
 * pushed, rendezvous, several bounce pieces) and in both arrival orders.
 * Every rank allocates the same way, so an offset on the receiving side
 * fixes the distance between the two processes' buffers. Ring pattern,
 * any rank count; also a Sendrecv to ourselves and an Allgather into a
 * shifted buffer. With --expect-slow (run with FERRY_COPY_ALIAS=on) the
 * library's MPI_T counters must show that the remedies ran wherever cma
 * carried messages: copies by the vector loop and transfers bounced
 * through scratch. */
#include "mpitest.h"

#define GUARD 128
#define MAXLEN (1 * MT_MIB + 4099)

static const int sizes[] = {100,   2000,   4096,   5000,  16387,
                            65536, 200000, 262149, MAXLEN};
static const int dists[] = {0, 8, 16, 31, 32, -16};
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))
#define NDISTS ((int)(sizeof(dists) / sizeof(dists[0])))

/* 4096-aligned, so the same offset means the same address modulo 4096 on
 * every rank. */
static unsigned char *page_alloc(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, 4096, n))
        MT_FAIL("out of memory");
    return p;
}

static void check_guards(const unsigned char *rb, size_t at, size_t len,
                         const char *what, int size, int dist)
{
    for (size_t i = at - GUARD; i < at; i++)
        MT_CHECK(rb[i] == 0xA5,
                 "%s %d B at distance %d: byte before the "
                 "buffer written",
                 what, size, dist);
    for (size_t i = at + len; i < at + len + GUARD; i++)
        MT_CHECK(rb[i] == 0xA5,
                 "%s %d B at distance %d: byte after the "
                 "buffer written",
                 what, size, dist);
}

/* The job's total of counter 'name' (0 if this MPI has no such pvar). */
static unsigned long long pvar_total(const char *name)
{
    unsigned long long v = mt_pvar(name), sum = 0;
    MT_MPI(MPI_Allreduce(&v, &sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                         MPI_COMM_WORLD));
    return sum;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int expect_slow = argc > 1 && strcmp(argv[1], "--expect-slow") == 0;
    int provided = 0;
    MT_MPI(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    int dest = (mt_rank + 1) % mt_size, src = (mt_rank + mt_size - 1) % mt_size;
    size_t span = MAXLEN + 3 * 4096;
    unsigned char *sb = page_alloc(span), *rb = page_alloc(span);
    const size_t so = 1024; /* the send buffer's offset */
    for (int k = 0; k < NSIZES; k++) {
        for (int j = 0; j < NDISTS; j++) {
            for (int order = 0; order < 2; order++) {
                int len = sizes[k];
                size_t ro = (size_t)((int)so + dists[j]);
                uint32_t seed = (uint32_t)(mt_rank * 1000 + k * 10 + j);
                uint32_t rseed = (uint32_t)(src * 1000 + k * 10 + j);
                mt_fill(sb + so, (size_t)len, seed);
                memset(rb, 0xA5, span);
                int tag = k * 100 + j * 2 + order;
                MPI_Request rq[2];
                if (order == 0) {
                    /* receive posted first: early receivers */
                    MT_MPI(MPI_Irecv(rb + ro, len, MPI_BYTE, src, tag,
                                     MPI_COMM_WORLD, &rq[0]));
                    MPI_Barrier(MPI_COMM_WORLD);
                    MT_MPI(MPI_Isend(sb + so, len, MPI_BYTE, dest, tag,
                                     MPI_COMM_WORLD, &rq[1]));
                } else {
                    /* the message waits for its receive: late receivers */
                    MT_MPI(MPI_Isend(sb + so, len, MPI_BYTE, dest, tag,
                                     MPI_COMM_WORLD, &rq[1]));
                    MPI_Barrier(MPI_COMM_WORLD);
                    MT_MPI(MPI_Irecv(rb + ro, len, MPI_BYTE, src, tag,
                                     MPI_COMM_WORLD, &rq[0]));
                }
                MPI_Status st[2];
                MT_MPI(MPI_Waitall(2, rq, st));
                int got = -1;
                MPI_Get_count(&st[0], MPI_BYTE, &got);
                MT_EQ(got, len, "bytes received");
                char what[96];
                snprintf(what, sizeof what, "%d B at distance %d, %s receiver",
                         len, dists[j], order ? "late" : "early");
                MT_VERIFY(rb + ro, (size_t)len, rseed, what);
                check_guards(rb, ro, (size_t)len, "message", len, dists[j]);
            }
        }
    }

    /* To ourselves, and an Allgather whose blocks sit 16 bytes past the
     * send buffer's offset. */
    for (int k = 0; k < NSIZES; k++) {
        int len = sizes[k];
        size_t ro = so + 16;
        mt_fill(sb + so, (size_t)len, 7u + (uint32_t)k);
        memset(rb, 0xA5, span);
        MT_MPI(MPI_Sendrecv(sb + so, len, MPI_BYTE, mt_rank, 5, rb + ro, len,
                            MPI_BYTE, mt_rank, 5, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
        MT_VERIFY(rb + ro, (size_t)len, 7u + (uint32_t)k, "Sendrecv to self");
        check_guards(rb, ro, (size_t)len, "Sendrecv to self", len, 16);
    }
    int block = 70001;
    size_t all = (size_t)block * (size_t)mt_size;
    unsigned char *ab = page_alloc(all + 2 * 4096 + GUARD);
    mt_fill(sb + so, (size_t)block, (uint32_t)mt_rank);
    memset(ab, 0xA5, all + 2 * 4096 + GUARD);
    MT_MPI(MPI_Allgather(sb + so, block, MPI_BYTE, ab + so + 16, block,
                         MPI_BYTE, MPI_COMM_WORLD));
    for (int r = 0; r < mt_size; r++)
        MT_VERIFY(ab + so + 16 + (size_t)r * (size_t)block, (size_t)block,
                  (uint32_t)r, "Allgather block");
    check_guards(ab, so + 16, all, "Allgather", block, 16);
    free(ab);
    free(sb);
    free(rb);
    unsigned long long loops = pvar_total("ferry_copy_loop_copies");
    unsigned long long bounced = pvar_total("ferry_copy_bounced_transfers");
    /* The remedies run where cma carries the rendezvous (where ptrace
     * rules forbid it, another mechanism does, at harmless distances). */
    unsigned long long cma = pvar_total("ferry_xfer_cma_msgs");
    if (expect_slow && cma > 0) {
        MT_CHECK(loops > 0, "copies by the vector loop: %llu", loops);
        MT_CHECK(bounced > 0, "transfers bounced through scratch: %llu",
                 bounced);
    } else if (expect_slow && mt_rank == 0) {
        printf("p2p_distance: no message went by cma here; the remedies' "
               "counters are not checked\n");
    }
    MT_MPI(MPI_T_finalize());
    return mt_finish("p2p_distance");
}
