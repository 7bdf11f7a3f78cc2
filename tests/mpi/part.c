/* SPDX-License-Identifier: MIT */
/* Partitioned point-to-point (MPI 4.0 4.2) around a ring: the sender has 8
 * partitions marked ready one by one in reverse order, by ranges and by a
 * list, the receiver 4 (the totals agree); three activations of the same
 * requests with fresh data, MPI_Parrived before and after, every byte
 * checked; an MPI_ANY_TAG receive posted on the same communicator all
 * along must not take a partitioned message; MPI_PROC_NULL peers; argument
 * errors (partition out of range, marked twice, wildcards, Parrived on a
 * send request, Pready on an inactive request). */
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
