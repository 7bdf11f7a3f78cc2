/* SPDX-License-Identifier: MIT */
/* Partitioned point-to-point (MPI 4.0 4.2) around a ring: the sender has 8
 * partitions marked ready one by one in reverse order, by ranges and by a
 * list, the receiver 4 (the totals agree); three activations of the same
 * requests with fresh data, MPI_Parrived before and after, every byte
 * checked; an MPI_ANY_TAG receive posted on the same communicator all
 * along must not take a partitioned message; MPI_PROC_NULL peers; argument
 * errors (partition out of range, marked twice, wildcards, Parrived on a
 * send request, Pready on an inactive request); pairing in initialization
 * order with statuses naming the user's tag. */
#include "mpitest.h"

enum { SPARTS = 8, RPARTS = 4, ELEMS = 3000, ROUNDS = 3 };

int main(int argc, char **argv)
{
    MT_MPI(MPI_Init(&argc, &argv));
    MT_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
    MT_MPI(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int n = mt_size, me = mt_rank;
    int right = (me + 1) % n, left = (me + n - 1) % n;
    size_t bytes = (size_t)SPARTS * ELEMS * sizeof(double);
    double *out = malloc(bytes), *in = malloc(bytes + 64);
    MT_CHECK(out && in, "malloc");

    /* A plain receive with wildcards, waiting for a plain message sent at
     * the end: partitioned messages must pass it by. */
    int plain = -1;
    MPI_Request any;
    MT_MPI(MPI_Irecv(&plain, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                     MPI_COMM_WORLD, &any));

    MPI_Request sreq, rreq;
    MT_MPI(MPI_Psend_init(out, SPARTS, ELEMS, MPI_DOUBLE, right, 5,
                          MPI_COMM_WORLD, MPI_INFO_NULL, &sreq));
    MT_MPI(MPI_Precv_init(in, RPARTS, (MPI_Count)ELEMS * SPARTS / RPARTS,
                          MPI_DOUBLE, left, 5, MPI_COMM_WORLD, MPI_INFO_NULL,
                          &rreq));
    /* Not active yet. */
    MT_ERRCLASS(MPI_Pready(0, sreq), MPI_ERR_REQUEST, "Pready before Start");
    for (int round = 0; round < ROUNDS; round++) {
        uint32_t seed = 100u * (uint32_t)round + (uint32_t)me;
        uint32_t lseed = 100u * (uint32_t)round + (uint32_t)left;
        memset(in, 0xee, bytes + 64);
        MT_MPI(MPI_Start(&rreq));
        MT_MPI(MPI_Start(&sreq));
        int flag = 1;
        MT_MPI(MPI_Parrived(rreq, RPARTS - 1, &flag));
        /* The sender's partitions get filled and marked one at a time. */
        mt_fill(out, bytes, seed);
        switch (round) {
        case 0:
            for (int k = SPARTS - 1; k >= 0; k--)
                MT_MPI(MPI_Pready(k, sreq));
            break;
        case 1:
            MT_MPI(MPI_Pready_range(0, 2, sreq));
            MT_ERRCLASS(MPI_Pready(1, sreq), MPI_ERR_ARG, "Pready twice");
            MT_ERRCLASS(MPI_Pready_range(2, 4, sreq), MPI_ERR_ARG,
                        "range overlapping ready partitions");
            MT_MPI(MPI_Pready_range(3, SPARTS - 1, sreq));
            break;
        default: {
            int bad[2] = {4, 4};
            MT_ERRCLASS(MPI_Pready_list(2, bad, sreq), MPI_ERR_ARG,
                        "a list naming a partition twice");
            int oob[1] = {SPARTS};
            MT_ERRCLASS(MPI_Pready_list(1, oob, sreq), MPI_ERR_ARG,
                        "a list with a partition out of range");
            int list1[3] = {6, 1, 3}, list2[5] = {0, 2, 4, 5, 7};
            MT_MPI(MPI_Pready_list(3, list1, sreq));
            MT_MPI(MPI_Pready_list(5, list2, sreq));
            break;
        }
        }
        MT_ERRCLASS(MPI_Pready(SPARTS, sreq), MPI_ERR_ARG,
                    "partition out of range");
        /* Every partition arrives. */
        for (int k = 0; k < RPARTS; k++) {
            flag = 0;
            while (!flag)
                MT_MPI(MPI_Parrived(rreq, k, &flag));
        }
        MPI_Status st;
        MT_MPI(MPI_Wait(&rreq, &st));
        int count = -1;
        MT_MPI(MPI_Get_count(&st, MPI_DOUBLE, &count));
        MT_EQ(count, SPARTS * ELEMS, "elements received");
        MT_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        MT_VERIFY(in, bytes, lseed, "partitioned message");
        MT_ALL((unsigned char *)in + bytes, 64, 0xee, "guard after the buffer");
        int done = 1;
        MT_MPI(MPI_Test(&any, &done, MPI_STATUS_IGNORE));
        MT_EQ(done, 0, "wildcard receive untouched by partitioned messages");
    }
    MT_ERRCLASS(MPI_Parrived(sreq, 0, &plain), MPI_ERR_REQUEST,
                "Parrived on a send request");
    MT_MPI(MPI_Request_free(&sreq));
    MT_MPI(MPI_Request_free(&rreq));

    /* Pairing follows initialization order (MPI 4.0 4.2.2), not the order
     * of MPI_Start/MPI_Pready: per tag, the k-th send initialized meets the
     * k-th receive initialized. Tags 9, 9 and MPI_TAG_UB, initialized in
     * different orders on the two sides, started and readied in a third;
     * a send initialized and freed unstarted, with its receive, must not
     * shift the pairing of the ones initialized after it. (MPICH's
     * part/multipart found this.) */
    {
        enum { NM = 3, ME = 100 };
        int *tub, flag = 0;
        MT_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tub, &flag));
        MT_CHECK(flag, "MPI_TAG_UB attribute");
        int tags[NM] = {9, 9, *tub};
        static int sbuf[NM][ME], rbuf[NM][ME];
        MPI_Request s[NM], rr[NM], ghost_s, ghost_r;
        MT_MPI(MPI_Psend_init(sbuf[0], 1, ME, MPI_INT, right, 9, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &ghost_s));
        MT_MPI(MPI_Request_free(&ghost_s));
        const int sorder[NM] = {2, 0, 1}, rorder[NM] = {0, 2, 1};
        for (int i = 0; i < NM; i++) {
            int k = sorder[i];
            MT_MPI(MPI_Psend_init(sbuf[k], 2, ME / 2, MPI_INT, right, tags[k],
                                  MPI_COMM_WORLD, MPI_INFO_NULL, &s[k]));
        }
        MT_MPI(MPI_Precv_init(rbuf[0], 1, ME, MPI_INT, left, 9, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &ghost_r));
        MT_MPI(MPI_Request_free(&ghost_r));
        for (int i = 0; i < NM; i++) {
            int k = rorder[i];
            MT_MPI(MPI_Precv_init(rbuf[k], 1, ME, MPI_INT, left, tags[k],
                                  MPI_COMM_WORLD, MPI_INFO_NULL, &rr[k]));
        }
        for (int round = 0; round < 2; round++) {
            for (int k = 0; k < NM; k++) {
                for (int j = 0; j < ME; j++)
                    rbuf[k][j] = -1;
                MT_MPI(MPI_Start(&rr[k]));
            }
            for (int k = NM - 1; k >= 0; k--) {
                MT_MPI(MPI_Start(&s[k]));
                for (int j = 0; j < ME; j++)
                    sbuf[k][j] = 1000 * me + 100 * k + round;
                MT_MPI(MPI_Pready_range(0, 1, s[k]));
            }
            MPI_Status st[NM];
            MT_MPI(MPI_Waitall(NM, rr, st));
            MT_MPI(MPI_Waitall(NM, s, MPI_STATUSES_IGNORE));
            for (int k = 0; k < NM; k++) {
                MT_EQ(rbuf[k][0], 1000 * left + 100 * k + round,
                      "receive k paired with send k");
                MT_EQ(rbuf[k][ME - 1], 1000 * left + 100 * k + round,
                      "last element of receive k");
                MT_EQ(st[k].MPI_TAG, tags[k], "status names the user's tag");
                MT_EQ(st[k].MPI_SOURCE, left, "status source");
            }
        }
        for (int k = 0; k < NM; k++) {
            MT_MPI(MPI_Request_free(&s[k]));
            MT_MPI(MPI_Request_free(&rr[k]));
        }
    }

    /* MPI_PROC_NULL on both sides completes at once. */
    MT_MPI(MPI_Psend_init(out, 2, 1, MPI_DOUBLE, MPI_PROC_NULL, 1,
                          MPI_COMM_WORLD, MPI_INFO_NULL, &sreq));
    MT_MPI(MPI_Precv_init(in, 2, 1, MPI_DOUBLE, MPI_PROC_NULL, 1,
                          MPI_COMM_WORLD, MPI_INFO_NULL, &rreq));
    MT_MPI(MPI_Start(&sreq));
    MT_MPI(MPI_Start(&rreq));
    MT_MPI(MPI_Pready_range(0, 1, sreq));
    MT_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    MT_MPI(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
    MT_MPI(MPI_Request_free(&sreq));
    MT_MPI(MPI_Request_free(&rreq));

    /* Wildcards and bad partition counts. */
    MPI_Request r = MPI_REQUEST_NULL;
    MT_ERRCLASS(MPI_Precv_init(in, 2, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 1,
                               MPI_COMM_WORLD, MPI_INFO_NULL, &r),
                MPI_ERR_RANK, "MPI_ANY_SOURCE");
    MT_ERRCLASS(MPI_Precv_init(in, 2, 1, MPI_DOUBLE, left, MPI_ANY_TAG,
                               MPI_COMM_WORLD, MPI_INFO_NULL, &r),
                MPI_ERR_TAG, "MPI_ANY_TAG");
    MT_ERRCLASS(MPI_Psend_init(out, 0, 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &r),
                MPI_ERR_ARG, "zero partitions");
    MT_ERRCLASS(MPI_Psend_init(out, 2, 1, MPI_DOUBLE, n, 1, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &r),
                MPI_ERR_RANK, "destination out of range");

    /* The plain message the wildcard receive was waiting for, once every
     * rank is past its checks of that receive. */
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int token = 42 + me;
    MT_MPI(MPI_Send(&token, 1, MPI_INT, right, 77, MPI_COMM_WORLD));
    MPI_Status st;
    MT_MPI(MPI_Wait(&any, &st));
    MT_EQ(plain, 42 + left, "plain message");
    MT_EQ(st.MPI_TAG, 77, "plain message tag");
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        printf("part: OK (%d ranks)\n", n);
    free(out);
    free(in);
    MT_MPI(MPI_Finalize());
    return 0;
}
