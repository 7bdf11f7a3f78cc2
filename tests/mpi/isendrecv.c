/* SPDX-License-Identifier: MIT */
/* MPI_Isendrecv / MPI_Isendrecv_replace (MPI-4) and the large-count
 * Sendrecv/Isendrecv forms: ring exchanges 0 B to 4 MiB checked byte for
 * byte with guards, several requests outstanding (Waitall, a Test loop),
 * a strided datatype replaced in place with its holes untouched,
 * MPI_PROC_NULL on either side (empty-receive status), truncation reported
 * by MPI_Wait as MPI_ERR_TRUNCATE with the next message intact, and
 * argument errors at the call. */
#include "mpitest.h"

#define GUARD 64
#define GUARD_BYTE 0xA5

static int right, left;

static uint32_t seed_of(int sender, int what)
{
    return (uint32_t)(sender * 1000 + what);
}

static void ring_sizes(void)
{
    static const size_t sizes[] = {0,     1,          255,       4096,
                                   70000, 1 * MT_MIB, 4 * MT_MIB};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t n = sizes[i];
        uint8_t *out = mt_malloc(n);
        uint8_t *in = mt_malloc(n + GUARD);
        mt_fill(out, n, seed_of(mt_rank, (int)i));
        memset(in, GUARD_BYTE, n + GUARD);
        MPI_Request rq;
        MPI_Status st;
        MT_MPI(MPI_Isendrecv(out, (int)n, MPI_BYTE, right, 10 + (int)i, in,
                             (int)n, MPI_BYTE, left, 10 + (int)i,
                             MPI_COMM_WORLD, &rq));
        MT_MPI(MPI_Wait(&rq, &st));
        MT_CHECK(rq == MPI_REQUEST_NULL, "request freed by Wait");
        MT_EQ(st.MPI_SOURCE, left, "status source");
        MT_EQ(st.MPI_TAG, 10 + (int)i, "status tag");
        int cnt = -1;
        MT_MPI(MPI_Get_count(&st, MPI_BYTE, &cnt));
        MT_EQ(cnt, (int)n, "received count");
        MT_VERIFY(in, n, seed_of(left, (int)i), "Isendrecv ring");
        MT_ALL(in + n, GUARD, GUARD_BYTE, "guard after the receive buffer");
        /* The send buffer is the caller's again and unchanged. */
        MT_VERIFY(out, n, seed_of(mt_rank, (int)i), "send buffer unchanged");
        free(out);
        free(in);
    }
}

static void several_outstanding(void)
{
    enum { N = 4, LEN = 20000 };
    uint8_t *out = mt_malloc(N * LEN), *in = mt_malloc(N * LEN);
    MPI_Request rq[N];
    MPI_Status st[N];
    memset(in, 0, N * LEN);
    /* Tags in reverse order of posting on the receive side: matching is by
     * tag, whatever order the requests complete in. */
    for (int k = 0; k < N; k++) {
        mt_fill(out + k * LEN, LEN, seed_of(mt_rank, 100 + k));
        MT_MPI(MPI_Isendrecv(out + k * LEN, LEN, MPI_BYTE, right, 50 + k,
                             in + k * LEN, LEN, MPI_BYTE, left, 50 + k,
                             MPI_COMM_WORLD, &rq[k]));
    }
    /* The first by a Test loop, the rest by Waitall. */
    int flag = 0;
    while (!flag)
        MT_MPI(MPI_Test(&rq[0], &flag, &st[0]));
    MT_EQ(st[0].MPI_TAG, 50, "Test status tag");
    MT_MPI(MPI_Waitall(N - 1, rq + 1, st + 1));
    for (int k = 0; k < N; k++) {
        MT_VERIFY(in + k * LEN, LEN, seed_of(left, 100 + k),
                  "outstanding Isendrecv");
        MT_EQ(st[k].MPI_SOURCE, left, "Waitall status source");
    }
    free(out);
    free(in);
}

/* Every third int of 'count' blocks of two: 0 1 . 3 4 . ... */
static void replace_strided(void)
{
    enum { BLOCKS = 1000, SPAN = BLOCKS * 3 };
    MPI_Datatype vec;
    MT_MPI(MPI_Type_vector(BLOCKS, 2, 3, MPI_INT, &vec));
    MT_MPI(MPI_Type_commit(&vec));
    int *buf = mt_malloc(SPAN * sizeof(int));
    for (int i = 0; i < SPAN; i++)
        buf[i] = i % 3 == 2 ? -7 : mt_rank * 100000 + i;
    MPI_Request rq;
    MPI_Status st;
    MT_MPI(MPI_Isendrecv_replace(buf, 1, vec, right, 70, left, 70,
                                 MPI_COMM_WORLD, &rq));
    /* The outgoing data was copied at the call: scribbling on the buffer
     * now is the program's right only after completion, so just wait. */
    MT_MPI(MPI_Wait(&rq, &st));
    for (int i = 0; i < SPAN; i++) {
        int want = i % 3 == 2 ? -7 : left * 100000 + i;
        MT_CHECK(buf[i] == want, "replace strided: int %d is %d, want %d", i,
                 buf[i], want);
    }
    int cnt = -1;
    MT_MPI(MPI_Get_count(&st, vec, &cnt));
    MT_EQ(cnt, 1, "count in vector types");
    MT_MPI(MPI_Type_free(&vec));
    free(buf);

    /* A large contiguous one, through the rendezvous path. */
    size_t n = 3 * MT_MIB + 5;
    uint8_t *big = mt_malloc(n);
    mt_fill(big, n, seed_of(mt_rank, 71));
    MT_MPI(MPI_Isendrecv_replace(big, (int)n, MPI_BYTE, right, 71, left, 71,
                                 MPI_COMM_WORLD, &rq));
    MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MT_VERIFY(big, n, seed_of(left, 71), "large Isendrecv_replace");
    free(big);
}

static void proc_null(void)
{
    uint8_t out[16], in[16];
    memset(out, 1, sizeof(out));
    memset(in, GUARD_BYTE, sizeof(in));
    MPI_Request rq;
    MPI_Status st;
    st.MPI_SOURCE = st.MPI_TAG = 12345;
    MT_MPI(MPI_Isendrecv(out, 16, MPI_BYTE, MPI_PROC_NULL, 1, in, 16, MPI_BYTE,
                         MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq));
    MT_MPI(MPI_Wait(&rq, &st));
    MT_EQ(st.MPI_SOURCE, MPI_PROC_NULL, "PROC_NULL status source");
    MT_EQ(st.MPI_TAG, MPI_ANY_TAG, "PROC_NULL status tag");
    int cnt = -1;
    MT_MPI(MPI_Get_count(&st, MPI_BYTE, &cnt));
    MT_EQ(cnt, 0, "PROC_NULL count");
    MT_ALL(in, sizeof(in), GUARD_BYTE, "nothing received from PROC_NULL");

    /* Send only (receive from MPI_PROC_NULL) paired with receive only. */
    mt_fill(out, 16, seed_of(mt_rank, 80));
    MPI_Request r2[2];
    MT_MPI(MPI_Isendrecv(out, 16, MPI_BYTE, right, 80, NULL, 0, MPI_BYTE,
                         MPI_PROC_NULL, 80, MPI_COMM_WORLD, &r2[0]));
    MT_MPI(MPI_Isendrecv(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 80, in, 16, MPI_BYTE,
                         left, 80, MPI_COMM_WORLD, &r2[1]));
    MT_MPI(MPI_Waitall(2, r2, MPI_STATUSES_IGNORE));
    MT_VERIFY(in, 16, seed_of(left, 80), "one-sided halves");

    MT_MPI(MPI_Isendrecv_replace(in, 16, MPI_BYTE, MPI_PROC_NULL, 2,
                                 MPI_PROC_NULL, 2, MPI_COMM_WORLD, &rq));
    MT_MPI(MPI_Wait(&rq, &st));
    MT_EQ(st.MPI_SOURCE, MPI_PROC_NULL, "replace PROC_NULL source");
    MT_VERIFY(in, 16, seed_of(left, 80), "replace with PROC_NULL keeps data");
}

static void truncation_and_errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    uint8_t out[100], in[50 + GUARD];
    mt_fill(out, sizeof(out), seed_of(mt_rank, 90));
    memset(in, GUARD_BYTE, sizeof(in));
    MPI_Request rq;
    MPI_Status st;
    MT_MPI(MPI_Isendrecv(out, 100, MPI_BYTE, right, 90, in, 50, MPI_BYTE, left,
                         90, MPI_COMM_WORLD, &rq));
    MT_ERRCLASS(MPI_Wait(&rq, &st), MPI_ERR_TRUNCATE, "truncated Isendrecv");
    MT_CHECK(rq == MPI_REQUEST_NULL, "a failed request is freed too");
    MT_ALL(in + 50, GUARD, GUARD_BYTE, "guard after the truncated receive");

    /* The next message on the same pair is intact. */
    uint8_t in2[100];
    MT_MPI(MPI_Sendrecv(out, 100, MPI_BYTE, right, 91, in2, 100, MPI_BYTE, left,
                        91, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MT_VERIFY(in2, 100, seed_of(left, 90), "message after the truncation");

    MT_ERRCLASS(MPI_Isendrecv(out, 1, MPI_BYTE, mt_size, 0, in, 1, MPI_BYTE,
                              left, 0, MPI_COMM_WORLD, &rq),
                MPI_ERR_RANK, "destination out of range");
    MT_ERRCLASS(MPI_Isendrecv(out, 1, MPI_BYTE, right, 0, in, 1, MPI_BYTE, left,
                              -5, MPI_COMM_WORLD, &rq),
                MPI_ERR_TAG, "bad receive tag");
    MT_ERRCLASS(MPI_Isendrecv(out, 1, MPI_BYTE, right, 0, in, 1, MPI_BYTE, left,
                              0, MPI_COMM_WORLD, NULL),
                MPI_ERR_ARG, "NULL request pointer");
    MT_ERRCLASS(MPI_Isendrecv_replace(in, -1, MPI_BYTE, right, 0, left, 0,
                                      MPI_COMM_WORLD, &rq),
                MPI_ERR_COUNT, "negative count");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void large_count_forms(void)
{
    MPI_Count n = 300000;
    uint8_t *out = mt_malloc((size_t)n), *in = mt_malloc((size_t)n);
    mt_fill(out, (size_t)n, seed_of(mt_rank, 95));
    MPI_Status st;
    MT_MPI(MPI_Sendrecv_c(out, n, MPI_BYTE, right, 95, in, n, MPI_BYTE, left,
                          95, MPI_COMM_WORLD, &st));
    MPI_Count cnt = -1;
    MT_MPI(MPI_Get_count_c(&st, MPI_BYTE, &cnt));
    MT_CHECK(cnt == n, "Sendrecv_c count %lld", (long long)cnt);
    MT_VERIFY(in, (size_t)n, seed_of(left, 95), "Sendrecv_c");

    MPI_Request rq;
    MT_MPI(MPI_Isendrecv_c(out, n, MPI_BYTE, right, 96, in, n, MPI_BYTE, left,
                           96, MPI_COMM_WORLD, &rq));
    MT_MPI(MPI_Wait(&rq, &st));
    MT_VERIFY(in, (size_t)n, seed_of(left, 95), "Isendrecv_c");

    mt_fill(in, (size_t)n, seed_of(mt_rank, 97));
    MT_MPI(MPI_Sendrecv_replace_c(in, n, MPI_BYTE, right, 97, left, 97,
                                  MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MT_VERIFY(in, (size_t)n, seed_of(left, 97), "Sendrecv_replace_c");

    mt_fill(in, (size_t)n, seed_of(mt_rank, 98));
    MT_MPI(MPI_Isendrecv_replace_c(in, n, MPI_BYTE, right, 98, left, 98,
                                   MPI_COMM_WORLD, &rq));
    MT_MPI(MPI_Wait(&rq, &st));
    MT_MPI(MPI_Get_count_c(&st, MPI_BYTE, &cnt));
    MT_CHECK(cnt == n, "Isendrecv_replace_c count %lld", (long long)cnt);
    MT_VERIFY(in, (size_t)n, seed_of(left, 98), "Isendrecv_replace_c");
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    right = (mt_rank + 1) % mt_size;
    left = (mt_rank + mt_size - 1) % mt_size;
    ring_sizes();
    several_outstanding();
    replace_strided();
    proc_null();
    truncation_and_errors();
    large_count_forms();
    return mt_finish("isendrecv");
}
