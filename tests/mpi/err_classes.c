/* SPDX-License-Identifier: MIT */
/* Error classes under MPI_ERRORS_RETURN: each invalid argument the standard
 * names (rank, tag, count, communicator, datatype, buffer, root, op) gives
 * its class through MPI_Error_class, MPI_Error_string describes every
 * class, the handler is inherited by MPI_Comm_dup, and after all of that
 * the job still communicates normally. */
#include "mpitest.h"

#include <stdlib.h>

static int ub_tag(void)
{
    int *ub = NULL, flag = 0;
    MT_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    MT_CHECK(flag && ub, "MPI_TAG_UB attribute missing");
    MT_CHECK(*ub >= 32767, "MPI_TAG_UB %d below the standard's minimum", *ub);
    return *ub;
}

static void check_p2p_args(MPI_Comm comm, const char *which)
{
    int buf[4] = {0}, n = mt_size;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Datatype uncommitted;
    char what[96];
#define WHAT(s) (snprintf(what, sizeof what, "%s: %s", which, s), what)

    /* Ranks outside [0, size) and the receive-only wildcard. */
    MT_ERRCLASS(MPI_Send(buf, 1, MPI_INT, n, 0, comm), MPI_ERR_RANK,
                WHAT("Send to rank == size"));
    MT_ERRCLASS(MPI_Send(buf, 1, MPI_INT, -5, 0, comm), MPI_ERR_RANK,
                WHAT("Send to rank -5"));
    MT_ERRCLASS(MPI_Send(buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, comm),
                MPI_ERR_RANK, WHAT("Send to MPI_ANY_SOURCE"));
    MT_ERRCLASS(MPI_Recv(buf, 1, MPI_INT, n + 3, 0, comm, MPI_STATUS_IGNORE),
                MPI_ERR_RANK, WHAT("Recv from rank size+3"));
    MT_ERRCLASS(MPI_Isend(buf, 1, MPI_INT, n, 0, comm, &req), MPI_ERR_RANK,
                WHAT("Isend to rank == size"));
    MT_EQ(req, MPI_REQUEST_NULL, WHAT("no request from a failed Isend"));
    MT_ERRCLASS(MPI_Irecv(buf, 1, MPI_INT, -7, 0, comm, &req), MPI_ERR_RANK,
                WHAT("Irecv from rank -7"));

    /* Negative tags other than MPI_ANY_TAG, and tags above MPI_TAG_UB. */
    MT_ERRCLASS(MPI_Send(buf, 1, MPI_INT, 0, -5, comm), MPI_ERR_TAG,
                WHAT("Send tag -5"));
    MT_ERRCLASS(MPI_Send(buf, 1, MPI_INT, 0, MPI_ANY_TAG, comm), MPI_ERR_TAG,
                WHAT("Send with MPI_ANY_TAG"));
    MT_ERRCLASS(MPI_Recv(buf, 1, MPI_INT, 0, -5, comm, MPI_STATUS_IGNORE),
                MPI_ERR_TAG, WHAT("Recv tag -5"));
    int ub = ub_tag();
    if (ub < 0x7fffffff)
        MT_ERRCLASS(MPI_Send(buf, 1, MPI_INT, 0, ub + 1, comm), MPI_ERR_TAG,
                    WHAT("Send tag MPI_TAG_UB+1"));

    /* Negative counts. */
    MT_ERRCLASS(MPI_Send(buf, -1, MPI_INT, 0, 0, comm), MPI_ERR_COUNT,
                WHAT("Send count -1"));
    MT_ERRCLASS(MPI_Recv(buf, -1, MPI_INT, 0, 0, comm, MPI_STATUS_IGNORE),
                MPI_ERR_COUNT, WHAT("Recv count -1"));
    MT_ERRCLASS(MPI_Isend(buf, -3, MPI_INT, 0, 0, comm, &req), MPI_ERR_COUNT,
                WHAT("Isend count -3"));

    /* Null and uncommitted datatypes. */
    MT_ERRCLASS(MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, comm), MPI_ERR_TYPE,
                WHAT("Send MPI_DATATYPE_NULL"));
    MT_ERRCLASS(
        MPI_Recv(buf, 1, MPI_DATATYPE_NULL, 0, 0, comm, MPI_STATUS_IGNORE),
        MPI_ERR_TYPE, WHAT("Recv MPI_DATATYPE_NULL"));
    MT_MPI(MPI_Type_contiguous(2, MPI_INT, &uncommitted));
    MT_ERRCLASS(MPI_Send(buf, 1, uncommitted, 0, 0, comm), MPI_ERR_TYPE,
                WHAT("Send with an uncommitted datatype"));
    MT_MPI(MPI_Type_free(&uncommitted));

    /* NULL buffer with data to move. */
    MT_ERRCLASS(MPI_Send(NULL, 4, MPI_INT, 0, 0, comm), MPI_ERR_BUFFER,
                WHAT("Send NULL buffer, count 4"));
    MT_ERRCLASS(MPI_Recv(NULL, 4, MPI_INT, 0, 0, comm, MPI_STATUS_IGNORE),
                MPI_ERR_BUFFER, WHAT("Recv NULL buffer, count 4"));
#undef WHAT
}

static void check_null_comm(void)
{
    int buf = 0, v = -1;
    MT_ERRCLASS(MPI_Send(&buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM,
                "Send on MPI_COMM_NULL");
    MT_ERRCLASS(
        MPI_Recv(&buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, MPI_STATUS_IGNORE),
        MPI_ERR_COMM, "Recv on MPI_COMM_NULL");
    MT_ERRCLASS(MPI_Comm_size(MPI_COMM_NULL, &v), MPI_ERR_COMM,
                "Comm_size(MPI_COMM_NULL)");
    MT_ERRCLASS(MPI_Comm_rank(MPI_COMM_NULL, &v), MPI_ERR_COMM,
                "Comm_rank(MPI_COMM_NULL)");
    MT_ERRCLASS(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM,
                "Barrier(MPI_COMM_NULL)");
}

/* Send data inside the receive buffer without MPI_IN_PLACE is aliasing
 * (MPI 4.0 2.5.1): every rank must refuse it the same way, or those that
 * go ahead wait forever for the others (MPICH errors/coll/noalias2 hung).
 * After each refused call a correct one must still work. */
static void check_coll_alias(void)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    int n = mt_size, me = mt_rank;
    int *b = calloc((size_t)(2 * n), sizeof(int));
    int *counts = malloc(sizeof(int) * (size_t)n);
    int *displs = malloc(sizeof(int) * (size_t)n);
    MT_CHECK(b && counts && displs, "out of memory");
    for (int i = 0; i < n; i++) {
        counts[i] = 2;
        displs[i] = 2 * i;
    }
    MT_ERRCLASS(MPI_Allgather(&b[me], 1, MPI_INT, b, 1, MPI_INT, comm),
                MPI_ERR_BUFFER, "Allgather sendbuf inside recvbuf");
    MT_ERRCLASS(MPI_Allgatherv(&b[2 * me], 2, MPI_INT, b, counts, displs,
                               MPI_INT, comm),
                MPI_ERR_BUFFER, "Allgatherv sendbuf at own block");
    MT_ERRCLASS(MPI_Alltoallv(b, counts, displs, MPI_INT, b, counts, displs,
                              MPI_INT, comm),
                MPI_ERR_BUFFER, "Alltoallv sendbuf == recvbuf");
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)n);
    MT_CHECK(types != NULL, "out of memory");
    for (int i = 0; i < n; i++) {
        types[i] = MPI_INT;
        displs[i] = 2 * i * (int)sizeof(int);
    }
    MT_ERRCLASS(
        MPI_Alltoallw(b, counts, displs, types, b, counts, displs, types, comm),
        MPI_ERR_BUFFER, "Alltoallw sendbuf == recvbuf");
    for (int i = 0; i < n; i++)
        displs[i] = 2 * i;
    /* Rooted: only the root has both buffers, so only the root calls. The
     * others must not be drawn into a collective by it. */
    if (me == 0) {
        MT_ERRCLASS(MPI_Gatherv(b, 2, MPI_INT, b, counts, displs, MPI_INT, 0,
                                MPI_COMM_SELF),
                    MPI_ERR_BUFFER, "Gatherv sendbuf == recvbuf");
        MT_ERRCLASS(MPI_Scatterv(b, counts, displs, MPI_INT, b, 2, MPI_INT, 0,
                                 MPI_COMM_SELF),
                    MPI_ERR_BUFFER, "Scatterv sendbuf == recvbuf");
        MT_ERRCLASS(
            MPI_Gather(&b[1], 2, MPI_INT, b, 2, MPI_INT, 0, MPI_COMM_SELF),
            MPI_ERR_BUFFER, "Gather sendbuf overlapping recvbuf");
    }
    /* MPI_Reduce_local has no in-place form and may not alias. */
    MT_ERRCLASS(MPI_Reduce_local(MPI_IN_PLACE, b, 2, MPI_INT, MPI_SUM),
                MPI_ERR_BUFFER, "Reduce_local inbuf MPI_IN_PLACE");
    MT_ERRCLASS(MPI_Reduce_local(b, MPI_IN_PLACE, 2, MPI_INT, MPI_SUM),
                MPI_ERR_BUFFER, "Reduce_local inoutbuf MPI_IN_PLACE");
    MT_ERRCLASS(MPI_Reduce_local(b, b, 2, MPI_INT, MPI_SUM), MPI_ERR_BUFFER,
                "Reduce_local inbuf == inoutbuf");
    /* Legal neighbours of the refused calls still run: disjoint buffers
     * and zero-count calls with equal pointers. */
    int *r = calloc((size_t)(2 * n), sizeof(int));
    MT_CHECK(r != NULL, "out of memory");
    b[0] = me + 1;
    MT_MPI(MPI_Allgather(b, 1, MPI_INT, r, 1, MPI_INT, comm));
    for (int i = 0; i < n; i++)
        MT_EQ(r[i], i + 1, "Allgather after refused calls");
    for (int i = 0; i < n; i++)
        counts[i] = 0;
    MT_MPI(MPI_Alltoallv(b, counts, displs, MPI_INT, b, counts, displs, MPI_INT,
                         comm));
    /* MPI_BOTTOM for both buffers with absolute displacements is no alias
     * (mpi4py's testAlltoallwBottom): the data are in disjoint arrays. */
    int *sa = calloc((size_t)n, sizeof(int)),
        *ra = calloc((size_t)n, sizeof(int));
    MPI_Aint sbase, rbase;
    MT_CHECK(sa && ra, "out of memory");
    MT_MPI(MPI_Get_address(sa, &sbase));
    MT_MPI(MPI_Get_address(ra, &rbase));
    int *sd = malloc(sizeof(int) * (size_t)n),
        *rd = malloc(sizeof(int) * (size_t)n);
    MT_CHECK(sd && rd, "out of memory");
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * (size_t)n),
                 *rt = malloc(sizeof(MPI_Datatype) * (size_t)n);
    MT_CHECK(st && rt, "out of memory");
    for (int i = 0; i < n; i++) {
        sa[i] = 100 * me + i;
        counts[i] = 1;
        sd[i] = rd[i] = 0;
        MT_MPI(MPI_Type_create_hindexed(
            1, (int[]){1}, (MPI_Aint[]){sbase + i * (MPI_Aint)sizeof(int)},
            MPI_INT, &st[i]));
        MT_MPI(MPI_Type_create_hindexed(
            1, (int[]){1}, (MPI_Aint[]){rbase + i * (MPI_Aint)sizeof(int)},
            MPI_INT, &rt[i]));
        MT_MPI(MPI_Type_commit(&st[i]));
        MT_MPI(MPI_Type_commit(&rt[i]));
    }
    MT_MPI(MPI_Alltoallw(MPI_BOTTOM, counts, sd, st, MPI_BOTTOM, counts, rd, rt,
                         comm));
    for (int i = 0; i < n; i++) {
        MT_EQ(ra[i], 100 * i + me, "Alltoallw from MPI_BOTTOM");
        MT_MPI(MPI_Type_free(&st[i]));
        MT_MPI(MPI_Type_free(&rt[i]));
    }
    free(st), free(rt), free(sd), free(rd), free(sa), free(ra);
    free(r);
    free(types);
    free(displs);
    free(counts);
    free(b);
}

static void check_coll_args(void)
{
    int v = 1, r = 0;
    MT_ERRCLASS(MPI_Bcast(&v, 1, MPI_INT, mt_size, MPI_COMM_WORLD),
                MPI_ERR_ROOT, "Bcast root == size");
    MT_ERRCLASS(MPI_Reduce(&v, &r, 1, MPI_INT, MPI_SUM, -1, MPI_COMM_WORLD),
                MPI_ERR_ROOT, "Reduce root -1");
    MT_ERRCLASS(MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD),
                MPI_ERR_OP, "Allreduce with MPI_OP_NULL");
    MT_ERRCLASS(MPI_Bcast(&v, -2, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT,
                "Bcast count -2");
    check_coll_alias();
}

static void check_strings(void)
{
    static const struct {
        int cls;
        const char *name;
    } classes[] = {
        {MPI_SUCCESS, "MPI_SUCCESS"},
        {MPI_ERR_BUFFER, "MPI_ERR_BUFFER"},
        {MPI_ERR_COUNT, "MPI_ERR_COUNT"},
        {MPI_ERR_TYPE, "MPI_ERR_TYPE"},
        {MPI_ERR_TAG, "MPI_ERR_TAG"},
        {MPI_ERR_COMM, "MPI_ERR_COMM"},
        {MPI_ERR_RANK, "MPI_ERR_RANK"},
        {MPI_ERR_ROOT, "MPI_ERR_ROOT"},
        {MPI_ERR_OP, "MPI_ERR_OP"},
        {MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE"},
        {MPI_ERR_ARG, "MPI_ERR_ARG"},
        {MPI_ERR_OTHER, "MPI_ERR_OTHER"},
        {MPI_ERR_INTERN, "MPI_ERR_INTERN"},
        {MPI_ERR_IN_STATUS, "MPI_ERR_IN_STATUS"},
        {MPI_ERR_PENDING, "MPI_ERR_PENDING"},
        {MPI_ERR_REQUEST, "MPI_ERR_REQUEST"},
    };
    char s[MPI_MAX_ERROR_STRING], t[MPI_MAX_ERROR_STRING];
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        int c = -1, len = -1;
        MT_MPI(MPI_Error_class(classes[i].cls, &c));
        MT_EQ(c, classes[i].cls, classes[i].name);
        memset(s, 0x7f, sizeof s);
        MT_MPI(MPI_Error_string(classes[i].cls, s, &len));
        MT_CHECK(len > 0 && len < MPI_MAX_ERROR_STRING,
                 "Error_string(%s) length %d", classes[i].name, len);
        MT_EQ((int)strlen(s), len, "Error_string length matches strlen");
    }
    MT_CHECK(MPI_ERR_LASTCODE >= MPI_ERR_REQUEST, "MPI_ERR_LASTCODE too low");
    /* Distinct classes are described differently. */
    int l1, l2;
    MPI_Error_string(MPI_ERR_RANK, s, &l1);
    MPI_Error_string(MPI_ERR_TAG, t, &l2);
    MT_CHECK(strcmp(s, t) != 0, "MPI_ERR_RANK and MPI_ERR_TAG read the same");
    /* An error code returned by a call also has a string. */
    int rc = MPI_Send(&l1, 1, MPI_INT, mt_size, 0, MPI_COMM_WORLD);
    MT_MPI(MPI_Error_string(rc, s, &l1));
    MT_CHECK(l1 > 0, "no string for an error code");
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    /* MPI_COMM_NULL errors go to the MPI_COMM_SELF (MPI-4) or
     * MPI_COMM_WORLD (older) handler: make both return. */
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MT_MPI(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    MT_CHECK(eh == MPI_ERRORS_RETURN, "Comm_get_errhandler gave 0x%x",
             (unsigned)eh);
    MT_MPI(MPI_Errhandler_free(&eh));

    check_p2p_args(MPI_COMM_WORLD, "world");
    /* A duplicate inherits MPI_ERRORS_RETURN. */
    MPI_Comm dup;
    MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    check_p2p_args(dup, "dup");
    check_null_comm();
    check_coll_args();
    check_strings();

    /* After all those errors, ordinary traffic still works. */
    int dest = (mt_rank + 1) % mt_size, src = (mt_rank + mt_size - 1) % mt_size;
    int out[256], in[256];
    for (int i = 0; i < 256; i++)
        out[i] = mt_rank * 1000 + i;
    MT_MPI(MPI_Sendrecv(out, 256, MPI_INT, dest, 0, in, 256, MPI_INT, src, 0,
                        dup, MPI_STATUS_IGNORE));
    for (int i = 0; i < 256; i++)
        MT_EQ(in[i], src * 1000 + i, "traffic after errors");
    int sum = 0;
    MT_MPI(MPI_Allreduce(&mt_rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MT_EQ(sum, mt_size * (mt_size - 1) / 2, "Allreduce after errors");
    MT_MPI(MPI_Comm_free(&dup));
    MT_EQ(dup, MPI_COMM_NULL, "Comm_free sets MPI_COMM_NULL");
    return mt_finish("err_classes");
}
