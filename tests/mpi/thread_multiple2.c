/* SPDX-License-Identifier: MIT */
/* MPI_THREAD_MULTIPLE with the finer locks (src/util/mt.h): four threads
 * per rank, each on a different lock, around the ring of ranks:
 *   0: blocks in MPI_Recv for a message the left rank's thread 1 sends only
 *      after all its object and communicator work, then ping-pongs
 *      0 B to 64 KiB with MPI_Sendrecv (every byte checked);
 *   1: object management: derived datatypes (create, commit, Pack/Unpack
 *      through them, dup, envelope, free), groups, info objects, user ops,
 *      and Comm_dup + a checked message + Comm_free on a communicator of
 *      its own, all while thread 0 of the same rank is blocked receiving;
 *   2: passive-target RMA on a window of MPI_Win_allocate over the node's
 *      ranks (windows do not span FERRY_NODES virtual nodes): Put, Get,
 *      Fetch_and_op, Compare_and_swap, flushes, under MPI_Win_lock_all;
 *   3: lock-free queries: Error_string/Error_class (predefined and user
 *      codes, the same text every time), errors raised in several threads
 *      at once (MPI_ERRORS_RETURN), Comm_rank/size, Type_size, Wtime,
 *      Query_thread, Is_thread_main, Get_count; and independent MPI-IO on a
 *      file of its own rank (File_write_at/read_at/get_size, the file's
 *      lock) beside the other threads' calls.
 * A lock held across a wait, or a lock order broken between the threads,
 * shows up as a deadlock (the test's timeout); a race as wrong data or a
 * ThreadSanitizer report (make test-tsan). */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

enum { T1_ITERS = 30, T2_ITERS = 200, T3_ITERS = 3000, PP_ITERS = 40 };
enum { PP_MAX = 64 * 1024 };

static int right, left;
static MPI_Comm t1comm; /* thread 1's communicator (dups come from it) */
static MPI_Comm node;   /* the window's ranks: this node's */
static int nrank, nsize, nright, nleft;
static MPI_Win win;
static int64_t *winbuf; /* [0, nsize): puts; [nsize, 2 nsize): counters */
static int user_class, user_code;
static char rank_text[MPI_MAX_ERROR_STRING];
static MPI_File fh; /* thread 3's: this rank's own file */

static uint32_t seed_of(int src, int t, int i)
{
    return (uint32_t)(src * 100000 + t * 1000 + i);
}

static void *thread0(void *arg)
{
    (void)arg;
    int token = -1;
    MPI_Status st;
    /* Blocked until the left rank's thread 1 is done with everything. */
    MT_MPI(MPI_Recv(&token, 1, MPI_INT, left, 30, MPI_COMM_WORLD, &st));
    MT_EQ(token, left * 7 + 1, "thread 0 token");
    unsigned char *out = malloc(PP_MAX), *in = malloc(PP_MAX);
    MT_CHECK(out && in, "malloc");
    for (int i = 0; i < PP_ITERS; i++) {
        size_t n = i == 0 ? 0 : ((size_t)1 << (i % 17)) % (PP_MAX + 1);
        mt_fill(out, n, seed_of(mt_rank, 0, i));
        MT_MPI(MPI_Sendrecv(out, (int)n, MPI_BYTE, right, 31, in, PP_MAX,
                            MPI_BYTE, left, 31, MPI_COMM_WORLD, &st));
        int count = -1;
        MT_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
        MT_EQ(count, n, "thread 0 length");
        MT_VERIFY(in, n, seed_of(left, 0, i), "thread 0 message");
    }
    free(out);
    free(in);
    return NULL;
}

static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int k = 0; k < *len; k++)
        ((int *)inout)[k] += ((int *)in)[k];
}

static void t1_datatypes(int i)
{
    /* 4 blocks of 2 ints, stride 3: 32 bytes of data, extent 44. */
    MPI_Datatype vec, dup;
    MT_MPI(MPI_Type_vector(4, 2, 3, MPI_INT, &vec));
    MT_MPI(MPI_Type_commit(&vec));
    int size = -1;
    MPI_Aint lb = -1, extent = -1;
    MT_MPI(MPI_Type_size(vec, &size));
    MT_EQ(size, 32, "vector size");
    MT_MPI(MPI_Type_get_extent(vec, &lb, &extent));
    MT_EQ(lb, 0, "vector lb");
    MT_EQ(extent, 44, "vector extent");
    int src[11], dst[11], packed[8], pos = 0;
    for (int k = 0; k < 11; k++) {
        src[k] = i * 100 + k;
        dst[k] = -1;
    }
    MT_MPI(MPI_Pack(src, 1, vec, packed, sizeof(packed), &pos, t1comm));
    MT_EQ(pos, 32, "Pack position");
    static const int idx[8] = {0, 1, 3, 4, 6, 7, 9, 10};
    for (int k = 0; k < 8; k++)
        MT_EQ(packed[k], i * 100 + idx[k], "packed element");
    pos = 0;
    MT_MPI(MPI_Type_dup(vec, &dup));
    MT_MPI(MPI_Unpack(packed, sizeof(packed), &pos, dst, 1, dup, t1comm));
    for (int k = 0; k < 11; k++)
        MT_EQ(dst[k], (k % 3 == 2) ? -1 : src[k], "unpacked element");
    int ni, na, nd, comb;
    MT_MPI(MPI_Type_get_envelope(dup, &ni, &na, &nd, &comb));
    MT_EQ(comb, MPI_COMBINER_DUP, "envelope combiner");
    char name[MPI_MAX_OBJECT_NAME];
    int len = 0;
    snprintf(name, sizeof(name), "vec-%d-%d", mt_rank, i);
    MT_MPI(MPI_Type_set_name(vec, name));
    char got[MPI_MAX_OBJECT_NAME];
    MT_MPI(MPI_Type_get_name(vec, got, &len));
    MT_CHECK(strcmp(got, name) == 0, "type name '%s', set '%s'", got, name);
    MT_MPI(MPI_Type_free(&vec));
    MT_MPI(MPI_Type_free(&dup));
    MT_EQ(vec, MPI_DATATYPE_NULL, "freed type handle");
}

static void t1_objects(int i)
{
    MPI_Group world, one;
    MT_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int me = mt_rank, tr = -1, gs = -1;
    MT_MPI(MPI_Group_incl(world, 1, &me, &one));
    MT_MPI(MPI_Group_size(one, &gs));
    MT_EQ(gs, 1, "Group_incl size");
    int zero = 0;
    MT_MPI(MPI_Group_translate_ranks(one, 1, &zero, world, &tr));
    MT_EQ(tr, mt_rank, "translated rank");
    MT_MPI(MPI_Group_free(&one));
    MT_MPI(MPI_Group_free(&world));

    MPI_Info info;
    MT_MPI(MPI_Info_create(&info));
    char val[32], got[32];
    snprintf(val, sizeof(val), "%d", i);
    MT_MPI(MPI_Info_set(info, "iteration", val));
    int flag = 0;
    MT_MPI(MPI_Info_get(info, "iteration", sizeof(got) - 1, got, &flag));
    MT_CHECK(flag && strcmp(got, val) == 0, "info value '%s'", got);
    MT_MPI(MPI_Info_free(&info));

    MPI_Op op;
    MT_MPI(MPI_Op_create(sum_fn, 1, &op));
    int a[3] = {1, 2, 3}, b[3] = {10, 20, 30};
    MT_MPI(MPI_Reduce_local(a, b, 3, MPI_INT, op));
    MT_CHECK(b[0] == 11 && b[1] == 22 && b[2] == 33, "Reduce_local");
    MT_MPI(MPI_Op_free(&op));
}

static void t1_comm(int i)
{
    MPI_Comm d;
    MT_MPI(MPI_Comm_dup(t1comm, &d));
    int r = -1, s = -1;
    MT_MPI(MPI_Comm_rank(d, &r));
    MT_MPI(MPI_Comm_size(d, &s));
    MT_EQ(r, mt_rank, "dup rank");
    MT_EQ(s, mt_size, "dup size");
    unsigned char out[300], in[300];
    mt_fill(out, sizeof(out), seed_of(mt_rank, 1, i));
    MT_MPI(MPI_Sendrecv(out, sizeof(out), MPI_BYTE, right, 5, in, sizeof(in),
                        MPI_BYTE, left, 5, d, MPI_STATUS_IGNORE));
    MT_VERIFY(in, sizeof(in), seed_of(left, 1, i), "thread 1 message on dup");
    MT_MPI(MPI_Comm_free(&d));
    MT_EQ(d, MPI_COMM_NULL, "freed comm handle");
}

static void *thread1(void *arg)
{
    (void)arg;
    for (int i = 0; i < T1_ITERS; i++) {
        t1_datatypes(i);
        t1_objects(i);
        t1_comm(i);
    }
    int token = mt_rank * 7 + 1;
    MT_MPI(MPI_Send(&token, 1, MPI_INT, right, 30, MPI_COMM_WORLD));
    return NULL;
}

static void *thread2(void *arg)
{
    (void)arg;
    for (int i = 0; i < T2_ITERS; i++) {
        int64_t v = (int64_t)seed_of(nrank, 2, i), back = -1;
        MT_MPI(MPI_Put(&v, 1, MPI_INT64_T, nright, nrank, 1, MPI_INT64_T, win));
        MT_MPI(MPI_Win_flush(nright, win));
        MT_MPI(
            MPI_Get(&back, 1, MPI_INT64_T, nright, nrank, 1, MPI_INT64_T, win));
        MT_MPI(MPI_Win_flush(nright, win));
        MT_EQ(back, v, "RMA Get after Put");
        int64_t one = 1, old = -1;
        MT_MPI(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, nright, nsize + nrank,
                                MPI_SUM, win));
        MT_MPI(MPI_Win_flush(nright, win));
        MT_EQ(old, i, "Fetch_and_op old value");
        /* Compare-and-swap the counter with its own value: the old value
         * comes back and the counter stays. */
        int64_t cmp = i + 1, res = -1;
        MT_MPI(MPI_Compare_and_swap(&cmp, &cmp, &res, MPI_INT64_T, nright,
                                    nsize + nrank, win));
        MT_MPI(MPI_Win_flush_all(win));
        MT_EQ(res, i + 1, "Compare_and_swap old value");
    }
    return NULL;
}

static void *thread3(void *arg)
{
    (void)arg;
    double t0 = MPI_Wtime();
    for (int i = 0; i < T3_ITERS; i++) {
        char s[MPI_MAX_ERROR_STRING];
        int len = -1, cls = -1;
        MT_MPI(MPI_Error_string(MPI_ERR_RANK, s, &len));
        MT_CHECK(strcmp(s, rank_text) == 0 && len == (int)strlen(s),
                 "Error_string(MPI_ERR_RANK) changed: '%s'", s);
        MT_MPI(MPI_Error_string(user_code, s, &len));
        MT_CHECK(strcmp(s, "thread_multiple2 user code") == 0,
                 "Error_string(user code): '%s'", s);
        MT_MPI(MPI_Error_class(user_code, &cls));
        MT_EQ(cls, user_class, "class of the user code");
        int size = -1;
        MT_ERRCLASS(MPI_Type_size(MPI_DATATYPE_NULL, &size), MPI_ERR_TYPE,
                    "Type_size(MPI_DATATYPE_NULL)");
        MT_ERRCLASS(MPI_Comm_rank(MPI_COMM_NULL, &size), MPI_ERR_COMM,
                    "Comm_rank(MPI_COMM_NULL)");
        int r = -1, n = -1, q = -1, flag = 1;
        MT_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &r));
        MT_MPI(MPI_Comm_size(MPI_COMM_WORLD, &n));
        MT_EQ(r, mt_rank, "Comm_rank");
        MT_EQ(n, mt_size, "Comm_size");
        MT_MPI(MPI_Type_size(MPI_DOUBLE, &size));
        MT_EQ(size, 8, "Type_size(MPI_DOUBLE)");
        MT_MPI(MPI_Query_thread(&q));
        MT_EQ(q, MPI_THREAD_MULTIPLE, "Query_thread");
        MT_MPI(MPI_Is_thread_main(&flag));
        MT_EQ(flag, 0, "Is_thread_main in thread 3");
        MPI_Status st;
        MT_MPI(MPI_Status_set_elements(&st, MPI_INT, i % 50));
        int count = -1;
        MT_MPI(MPI_Get_count(&st, MPI_INT, &count));
        MT_EQ(count, i % 50, "Get_count");
        MT_MPI(MPI_Initialized(&flag));
        MT_EQ(flag, 1, "Initialized");
        if (i % 10 == 0) {
            unsigned char out[64], in[64];
            MPI_Offset at = (MPI_Offset)(i / 10 % 32) * 64, fsize = -1;
            mt_fill(out, sizeof(out), seed_of(mt_rank, 3, i));
            MT_MPI(MPI_File_write_at(fh, at, out, sizeof(out), MPI_BYTE,
                                     MPI_STATUS_IGNORE));
            MT_MPI(MPI_File_read_at(fh, at, in, sizeof(in), MPI_BYTE, &st));
            MT_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
            MT_EQ(count, 64, "File_read_at count");
            MT_VERIFY(in, sizeof(in), seed_of(mt_rank, 3, i), "file data");
            MT_MPI(MPI_File_get_size(fh, &fsize));
            MT_CHECK(fsize >= at + 64, "file size %lld", (long long)fsize);
        }
    }
    MT_CHECK(MPI_Wtime() >= t0, "Wtime went back");
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    MT_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MT_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
    MT_MPI(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));
    MT_EQ(provided, MPI_THREAD_MULTIPLE, "provided thread level");
    right = (mt_rank + 1) % mt_size;
    left = (mt_rank + mt_size - 1) % mt_size;
    /* Thread 3 raises errors on purpose: they must come back. */
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_MPI(MPI_Add_error_class(&user_class));
    MT_MPI(MPI_Add_error_code(user_class, &user_code));
    MT_MPI(MPI_Add_error_string(user_code, "thread_multiple2 user code"));
    int len;
    MT_MPI(MPI_Error_string(MPI_ERR_RANK, rank_text, &len));
    MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &t1comm));
    char fpath[96];
    snprintf(fpath, sizeof(fpath), "/tmp/ferry-tm2-%d-%d", (int)getpid(),
             mt_rank);
    MT_MPI(MPI_File_open(MPI_COMM_SELF, fpath,
                         MPI_MODE_CREATE | MPI_MODE_RDWR |
                             MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
    MT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                               MPI_INFO_NULL, &node));
    MT_MPI(MPI_Comm_rank(node, &nrank));
    MT_MPI(MPI_Comm_size(node, &nsize));
    nright = (nrank + 1) % nsize;
    nleft = (nrank + nsize - 1) % nsize;
    MPI_Aint wbytes = (MPI_Aint)(2 * nsize * sizeof(int64_t));
    MT_MPI(MPI_Win_allocate(wbytes, sizeof(int64_t), MPI_INFO_NULL, node,
                            &winbuf, &win));
    memset(winbuf, 0, (size_t)wbytes);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_MPI(MPI_Win_lock_all(0, win));

    void *(*fns[4])(void *) = {thread0, thread1, thread2, thread3};
    pthread_t th[4];
    for (int t = 0; t < 4; t++)
        MT_CHECK(pthread_create(&th[t], NULL, fns[t], NULL) == 0,
                 "pthread_create");
    for (int t = 0; t < 4; t++)
        pthread_join(th[t], NULL);

    MT_MPI(MPI_File_close(&fh));
    MT_CHECK(access(fpath, F_OK) != 0, "%s left behind", fpath);
    MT_MPI(MPI_Win_unlock_all(win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    /* What the left rank's thread 2 left in our window. */
    MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, nrank, 0, win));
    MT_EQ(winbuf[nleft], (int64_t)seed_of(nleft, 2, T2_ITERS - 1),
          "last Put from the left");
    MT_EQ(winbuf[nsize + nleft], T2_ITERS, "counter from the left");
    MT_MPI(MPI_Win_unlock(nrank, win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_MPI(MPI_Win_free(&win));
    MT_MPI(MPI_Comm_free(&node));
    MT_MPI(MPI_Comm_free(&t1comm));
    if (mt_rank == 0)
        printf("thread_multiple2: OK (%d ranks)\n", mt_size);
    MT_MPI(MPI_Finalize());
    return 0;
}
