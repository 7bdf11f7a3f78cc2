/* SPDX-License-Identifier: MIT */
/* Collectives on intercommunicators in every form (MPI 4.0 6.2.2, 6.12,
 * 6.13): each collective MPI defines there (not the scans), blocking,
 * nonblocking and persistent (started three times, with new data each
 * time), with int and large-count (_c) arguments, every root form
 * (MPI_ROOT, MPI_PROC_NULL, a remote rank; first and last member of
 * either group as root); results compared byte for byte (untouched gaps
 * included) with a reference each process computes from the world ranks
 * of the contributors. Then: nonblocking collectives and MPI_Comm_idup
 * started by one group before the other group has called them, whose
 * members first wait for point-to-point messages the first group sends
 * after starting (a start that waited for the other group would
 * deadlock); several outstanding collectives on two intercommunicators
 * completed in different orders; Comm_idup(_with_info) in opposite orders
 * on the two groups. Groups: even/odd world ranks, then world rank 0
 * against the rest. Needs 2 ranks or more. */
#include <stdbool.h>

#include "mpitest.h"

#define N 3     /* elements per block (uniform forms) */
#define NE 4096 /* ints per buffer */
#define SENT (-1)

enum form { F_B, F_NB, F_P, F_BC, F_NBC, F_PC, NFORMS };
static const char *const s_fname[NFORMS] = {"blocking",      "nonblocking",
                                            "persistent",    "blocking_c",
                                            "nonblocking_c", "persistent_c"};
#define KIND(f) ((f) % 3)
#define IS_C(f) ((f) >= F_BC)

enum coll {
    C_BARRIER,
    C_BCAST,
    C_GATHER,
    C_GATHERV,
    C_SCATTER,
    C_SCATTERV,
    C_ALLGATHER,
    C_ALLGATHERV,
    C_ALLTOALL,
    C_ALLTOALLV,
    C_ALLTOALLW,
    C_REDUCE,
    C_REDUCE_NC, /* a user-defined non-commutative op */
    C_ALLREDUCE,
    C_RSB,
    C_RS,
    NCOLLS
};
static const char *const s_cname[NCOLLS] = {
    "barrier",       "bcast",      "gather",
    "gatherv",       "scatter",    "scatterv",
    "allgather",     "allgatherv", "alltoall",
    "alltoallv",     "alltoallw",  "reduce",
    "reduce_nc",     "allreduce",  "reduce_scatter_block",
    "reduce_scatter"};

static int s_color, s_lrank, s_lsize, s_rsize;
static int *s_lworld, *s_rworld; /* local / remote rank -> world rank */

static int *s_sb, *s_rb, *s_want;
static int s_cnt[64], s_dsp[64], s_scnt[64], s_sdsp[64];
static MPI_Count s_cntc[64], s_scntc[64];
static MPI_Aint s_dspc[64], s_sdspc[64];
static MPI_Datatype s_types[64];
static MPI_Datatype s_affine;
static MPI_Op s_compose;

static int val(int w, int blk, int e, int it)
{
    return w * 100000 + blk * 1000 + e * 10 + it;
}

/* Counts of the v forms: block i of N or N + 1 elements, at gaps. */
static int vcnt(int i)
{
    return N + i % 2;
}
static int vdsp(int i)
{
    return i * (N + 2) + 1;
}

/* An affine map x -> m x + c; composing them is associative but not
 * commutative: "a op b" applies a first. */
struct affine {
    unsigned m, c;
};

static struct affine aff_of(int w, int e, int it)
{
    return (struct affine){2u * (unsigned)w + 3u, (unsigned)(w + e + it)};
}

static void compose_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    struct affine *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        unsigned m = b[i].m;
        b[i].m = m * a[i].m;
        b[i].c = m * a[i].c + b[i].c;
    }
}

#define ID(...) __VA_ARGS__
/* Issue collective NAME (nonblocking: MPI_I##LNAME) in form f: ARGS for
 * the int forms, ARGSC for the _c ones (identical unless arrays are
 * involved). */
#define ISSUE(f, req, NAME, LNAME, ARGS, ARGSC)                                \
    do {                                                                       \
        switch (f) {                                                           \
        case F_B:                                                              \
            MT_MPI(MPI_##NAME ARGS);                                           \
            break;                                                             \
        case F_NB:                                                             \
            MT_MPI(MPI_I##LNAME(ID ARGS, req));                                \
            break;                                                             \
        case F_P:                                                              \
            MT_MPI(MPI_##NAME##_init(ID ARGS, MPI_INFO_NULL, req));            \
            break;                                                             \
        case F_BC:                                                             \
            MT_MPI(MPI_##NAME##_c ARGSC);                                      \
            break;                                                             \
        case F_NBC:                                                            \
            MT_MPI(MPI_I##LNAME##_c(ID ARGSC, req));                           \
            break;                                                             \
        default:                                                               \
            MT_MPI(MPI_##NAME##_init_c(ID ARGSC, MPI_INFO_NULL, req));         \
            break;                                                             \
        }                                                                      \
    } while (0)

static void fill_sentinel(int *b)
{
    for (int i = 0; i < NE; i++)
        b[i] = SENT;
}

static void expect_buf(const char *what, int coll, int f, int root, int it)
{
    if (memcmp(s_rb, s_want, NE * sizeof(int)) == 0)
        return;
    int i = 0;
    while (s_rb[i] == s_want[i])
        i++;
    MT_FAIL("%s %s (%s, root %d, start %d): element %d is %d, expected %d",
            what, s_cname[coll], s_fname[f], root, it, i, s_rb[i], s_want[i]);
}

/* The root argument of group g's member rpos, as this process passes it. */
static int root_arg(int g, int rpos)
{
    if (g == s_color)
        return s_lrank == rpos ? MPI_ROOT : MPI_PROC_NULL;
    return rpos;
}

/* Fill the send buffer and the reference for start 'it'; the receive
 * buffer goes back to the sentinel. */
static void prepare(int coll, int root, int it)
{
    int me = mt_rank, L = s_lsize, R = s_rsize, lr = s_lrank;
    fill_sentinel(s_sb);
    fill_sentinel(s_rb);
    fill_sentinel(s_want);
    bool v = coll == C_GATHERV || coll == C_SCATTERV || coll == C_ALLGATHERV ||
             coll == C_ALLTOALLV || coll == C_ALLTOALLW;
    switch (coll) {
    case C_BARRIER:
        break;
    case C_BCAST:
        if (root == MPI_ROOT)
            for (int e = 0; e < N; e++)
                s_rb[e] = s_want[e] = val(me, 0, e, it);
        else if (root >= 0)
            for (int e = 0; e < N; e++)
                s_want[e] = val(s_rworld[root], 0, e, it);
        break;
    case C_GATHER:
    case C_GATHERV:
        if (root == MPI_ROOT) {
            for (int j = 0; j < R; j++) {
                int n = v ? vcnt(j) : N, d = v ? vdsp(j) : j * N;
                s_cnt[j] = n;
                s_dsp[j] = d;
                for (int e = 0; e < n; e++)
                    s_want[d + e] = val(s_rworld[j], 0, e, it);
            }
        } else if (root >= 0) {
            for (int e = 0; e < (v ? vcnt(lr) : N); e++)
                s_sb[e] = val(me, 0, e, it);
        }
        break;
    case C_SCATTER:
    case C_SCATTERV:
        if (root == MPI_ROOT) {
            for (int j = 0; j < R; j++) {
                int n = v ? vcnt(j) : N, d = v ? vdsp(j) : j * N;
                s_scnt[j] = n;
                s_sdsp[j] = d;
                for (int e = 0; e < n; e++)
                    s_sb[d + e] = val(me, j, e, it);
            }
        } else if (root >= 0) {
            for (int e = 0; e < (v ? vcnt(lr) : N); e++)
                s_want[e] = val(s_rworld[root], lr, e, it);
        }
        break;
    case C_ALLGATHER:
    case C_ALLGATHERV:
        for (int e = 0; e < (v ? vcnt(lr) : N); e++)
            s_sb[e] = val(me, 0, e, it);
        for (int j = 0; j < R; j++) {
            int n = v ? vcnt(j) : N, d = v ? vdsp(j) : j * N;
            s_cnt[j] = n;
            s_dsp[j] = d;
            for (int e = 0; e < n; e++)
                s_want[d + e] = val(s_rworld[j], 0, e, it);
        }
        break;
    case C_ALLTOALL:
    case C_ALLTOALLV:
    case C_ALLTOALLW:
        for (int j = 0; j < R; j++) {
            /* lr -> j carries N + (lr + j) % 2 elements in the v forms. */
            int n = v ? N + (lr + j) % 2 : N, d = v ? vdsp(j) : j * N;
            s_scnt[j] = s_cnt[j] = n;
            s_sdsp[j] = s_dsp[j] = d;
            for (int e = 0; e < n; e++) {
                s_sb[d + e] = val(me, j, e, it);
                s_want[d + e] = val(s_rworld[j], lr, e, it);
            }
        }
        break;
    case C_REDUCE:
        if (root == MPI_ROOT) {
            for (int e = 0; e < N + 2; e++) {
                s_want[e] = 0;
                for (int j = 0; j < R; j++)
                    s_want[e] += val(s_rworld[j], 0, e, it);
            }
        } else if (root >= 0) {
            for (int e = 0; e < N + 2; e++)
                s_sb[e] = val(me, 0, e, it);
        }
        break;
    case C_REDUCE_NC: {
        struct affine *sa = (struct affine *)s_sb;
        struct affine *wa = (struct affine *)s_want;
        if (root == MPI_ROOT) {
            for (int e = 0; e < N; e++) {
                struct affine acc = aff_of(s_rworld[0], e, it);
                for (int j = 1; j < R; j++) {
                    struct affine b = aff_of(s_rworld[j], e, it);
                    acc = (struct affine){b.m * acc.m, b.m * acc.c + b.c};
                }
                wa[e] = acc;
            }
        } else if (root >= 0) {
            for (int e = 0; e < N; e++)
                sa[e] = aff_of(me, e, it);
        }
        break;
    }
    case C_ALLREDUCE:
        for (int e = 0; e < N + 2; e++) {
            s_sb[e] = val(me, 0, e, it);
            s_want[e] = 0;
            for (int j = 0; j < R; j++)
                s_want[e] += val(s_rworld[j], 0, e, it);
        }
        break;
    case C_RSB:
    case C_RS: {
        /* Vectors of L * R elements on both sides; block counts over the
         * local group: R each, or (v) R + 1, R - 1, R, R... */
        for (int i = 0; i < L; i++)
            s_cnt[i] = coll == C_RSB || L < 2 ? R
                       : i == 0               ? R + 1
                       : i == 1               ? R - 1
                                              : R;
        int off = 0;
        for (int i = 0; i < lr; i++)
            off += s_cnt[i];
        for (int e = 0; e < L * R; e++)
            s_sb[e] = val(me, 0, e, it);
        for (int k = 0; k < s_cnt[lr]; k++) {
            s_want[k] = 0;
            for (int j = 0; j < R; j++)
                s_want[k] += val(s_rworld[j], 0, off + k, it);
        }
        break;
    }
    }
    for (int i = 0; i < 64; i++) {
        s_cntc[i] = s_cnt[i];
        s_dspc[i] = s_dsp[i];
        s_scntc[i] = s_scnt[i];
        s_sdspc[i] = s_sdsp[i];
        s_types[i] = MPI_INT;
    }
    if (coll == C_ALLTOALLW)
        for (int i = 0; i < 64; i++) {
            s_dspc[i] = s_dsp[i] *= (int)sizeof(int);
            s_sdspc[i] = s_sdsp[i] *= (int)sizeof(int);
        }
}

/* Issue (or, persistent, create) collective 'coll' in form f. */
static void issue(int coll, int f, int root, MPI_Comm ic, MPI_Request *req)
{
    int lr = s_lrank;
    bool sender = root >= 0; /* gather's senders, scatter's receivers */
    int *sb = s_sb, *rb = s_rb;
    switch (coll) {
    case C_BARRIER:
        if (KIND(f) == 0)
            MT_MPI(MPI_Barrier(ic));
        else if (KIND(f) == 1)
            MT_MPI(MPI_Ibarrier(ic, req));
        else
            MT_MPI(MPI_Barrier_init(ic, MPI_INFO_NULL, req));
        break;
    case C_BCAST:
        ISSUE(f, req, Bcast, bcast, (rb, N, MPI_INT, root, ic),
              (rb, N, MPI_INT, root, ic));
        break;
    case C_GATHER:
        ISSUE(f, req, Gather, gather,
              (sb, N, MPI_INT, rb, N, MPI_INT, root, ic),
              (sb, N, MPI_INT, rb, N, MPI_INT, root, ic));
        break;
    case C_GATHERV: {
        int n = sender ? vcnt(lr) : 0;
        ISSUE(f, req, Gatherv, gatherv,
              (sb, n, MPI_INT, rb, s_cnt, s_dsp, MPI_INT, root, ic),
              (sb, n, MPI_INT, rb, s_cntc, s_dspc, MPI_INT, root, ic));
        break;
    }
    case C_SCATTER:
        ISSUE(f, req, Scatter, scatter,
              (sb, N, MPI_INT, rb, N, MPI_INT, root, ic),
              (sb, N, MPI_INT, rb, N, MPI_INT, root, ic));
        break;
    case C_SCATTERV: {
        int n = sender ? vcnt(lr) : 0;
        ISSUE(f, req, Scatterv, scatterv,
              (sb, s_scnt, s_sdsp, MPI_INT, rb, n, MPI_INT, root, ic),
              (sb, s_scntc, s_sdspc, MPI_INT, rb, n, MPI_INT, root, ic));
        break;
    }
    case C_ALLGATHER:
        ISSUE(f, req, Allgather, allgather,
              (sb, N, MPI_INT, rb, N, MPI_INT, ic),
              (sb, N, MPI_INT, rb, N, MPI_INT, ic));
        break;
    case C_ALLGATHERV:
        ISSUE(f, req, Allgatherv, allgatherv,
              (sb, vcnt(lr), MPI_INT, rb, s_cnt, s_dsp, MPI_INT, ic),
              (sb, vcnt(lr), MPI_INT, rb, s_cntc, s_dspc, MPI_INT, ic));
        break;
    case C_ALLTOALL:
        ISSUE(f, req, Alltoall, alltoall, (sb, N, MPI_INT, rb, N, MPI_INT, ic),
              (sb, N, MPI_INT, rb, N, MPI_INT, ic));
        break;
    case C_ALLTOALLV:
        ISSUE(f, req, Alltoallv, alltoallv,
              (sb, s_scnt, s_sdsp, MPI_INT, rb, s_cnt, s_dsp, MPI_INT, ic),
              (sb, s_scntc, s_sdspc, MPI_INT, rb, s_cntc, s_dspc, MPI_INT, ic));
        break;
    case C_ALLTOALLW:
        ISSUE(f, req, Alltoallw, alltoallw,
              (sb, s_scnt, s_sdsp, s_types, rb, s_cnt, s_dsp, s_types, ic),
              (sb, s_scntc, s_sdspc, s_types, rb, s_cntc, s_dspc, s_types, ic));
        break;
    case C_REDUCE:
        ISSUE(f, req, Reduce, reduce,
              (sb, rb, N + 2, MPI_INT, MPI_SUM, root, ic),
              (sb, rb, N + 2, MPI_INT, MPI_SUM, root, ic));
        break;
    case C_REDUCE_NC:
        ISSUE(f, req, Reduce, reduce,
              (sb, rb, N, s_affine, s_compose, root, ic),
              (sb, rb, N, s_affine, s_compose, root, ic));
        break;
    case C_ALLREDUCE:
        ISSUE(f, req, Allreduce, allreduce,
              (sb, rb, N + 2, MPI_INT, MPI_SUM, ic),
              (sb, rb, N + 2, MPI_INT, MPI_SUM, ic));
        break;
    case C_RSB:
        ISSUE(f, req, Reduce_scatter_block, reduce_scatter_block,
              (sb, rb, s_rsize, MPI_INT, MPI_SUM, ic),
              (sb, rb, s_rsize, MPI_INT, MPI_SUM, ic));
        break;
    case C_RS:
        ISSUE(f, req, Reduce_scatter, reduce_scatter,
              (sb, rb, s_cnt, MPI_INT, MPI_SUM, ic),
              (sb, rb, s_cntc, MPI_INT, MPI_SUM, ic));
        break;
    }
}

static bool rooted(int coll)
{
    return coll == C_BCAST || coll == C_GATHER || coll == C_GATHERV ||
           coll == C_SCATTER || coll == C_SCATTERV || coll == C_REDUCE ||
           coll == C_REDUCE_NC;
}

static void run_one(MPI_Comm ic, int coll, int f, int root)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int starts = KIND(f) == 2 ? 3 : 1;
    for (int it = 0; it < starts; it++) {
        prepare(coll, root, it);
        if (it == 0)
            issue(coll, f, root, ic, &req);
        if (KIND(f) == 2)
            MT_MPI(MPI_Start(&req));
        if (KIND(f) != 0)
            MT_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        expect_buf("result of", coll, f, root, it);
    }
    if (KIND(f) == 2)
        MT_MPI(MPI_Request_free(&req));
}

static void check_forms(MPI_Comm ic)
{
    for (int coll = 0; coll < NCOLLS; coll++) {
        for (int f = 0; f < NFORMS; f++) {
            if (coll == C_BARRIER && IS_C(f))
                continue; /* no large-count barrier */
            if (!rooted(coll)) {
                run_one(ic, coll, f, 0);
                continue;
            }
            for (int g = 0; g < 2; g++) {
                int gsize = g == s_color ? s_lsize : s_rsize;
                run_one(ic, coll, f, root_arg(g, 0));
                if (gsize > 1)
                    run_one(ic, coll, f, root_arg(g, gsize - 1));
            }
        }
    }
}

/* Tell group 'late' that this (early) group has started: every member
 * sends one message to every remote member; the late group's members
 * receive all of them before they start the collective themselves. */
static void early_send(int tag)
{
    for (int j = 0; j < s_rsize; j++) {
        int v = mt_rank;
        MT_MPI(MPI_Send(&v, 1, MPI_INT, s_rworld[j], tag, MPI_COMM_WORLD));
    }
}

static void late_recv(int tag)
{
    for (int j = 0; j < s_rsize; j++) {
        int v = -1;
        MT_MPI(MPI_Recv(&v, 1, MPI_INT, s_rworld[j], tag, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        MT_EQ(v, s_rworld[j], "the early group's message");
    }
}

/* Every nonblocking collective, started by one group while the other
 * waits for messages the first sends only after starting it; both
 * orders. Point-to-point goes over the intercommunicator itself too. */
static void check_not_blocking(MPI_Comm ic)
{
    for (int early = 0; early < 2; early++) {
        for (int coll = 0; coll < NCOLLS; coll++) {
            int root = rooted(coll) ? root_arg(early, 0) : 0;
            MPI_Request req;
            prepare(coll, root, 7);
            if (s_color == early) {
                issue(coll, F_NB, root, ic, &req);
                early_send(100 + coll);
                /* And over ic: remote rank lr-wise ping. */
                for (int j = 0; j < s_rsize; j++)
                    MT_MPI(MPI_Send(&coll, 1, MPI_INT, j, 9, ic));
            } else {
                late_recv(100 + coll);
                for (int j = 0; j < s_rsize; j++) {
                    int v;
                    MT_MPI(
                        MPI_Recv(&v, 1, MPI_INT, j, 9, ic, MPI_STATUS_IGNORE));
                    MT_EQ(v, coll, "ping over the intercommunicator");
                }
                issue(coll, F_NB, root, ic, &req);
            }
            MT_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
            expect_buf("early-started", coll, F_NB, root, 7);
        }
    }
}

/* Several collectives outstanding on two intercommunicators at once,
 * completed in orders that differ by group and by rank. */
static void check_outstanding(MPI_Comm ic, MPI_Comm ic2)
{
    enum { K = 5 };
    int a[K][N + 2], ra[K][N + 2], b[N], bb[N], g2[64 * N];
    MPI_Request r[K + 3];
    for (int k = 0; k < K; k++)
        for (int e = 0; e < N + 2; e++) {
            a[k][e] = val(mt_rank, k, e, 0);
            ra[k][e] = SENT;
        }
    int broot = root_arg(1, 0);
    for (int e = 0; e < N; e++)
        b[e] = broot == MPI_ROOT ? val(mt_rank, 9, e, 0) : SENT;
    for (int k = 0; k < K; k++) {
        MPI_Comm c = k % 2 ? ic2 : ic;
        MT_MPI(MPI_Iallreduce(a[k], ra[k], N + 2, MPI_INT, MPI_SUM, c, &r[k]));
    }
    MT_MPI(MPI_Ibcast(b, N, MPI_INT, broot, ic2, &r[K]));
    MT_MPI(MPI_Ibarrier(ic, &r[K + 1]));
    for (int e = 0; e < N; e++)
        bb[e] = val(mt_rank, 3, e, 0);
    MT_MPI(MPI_Iallgather(bb, N, MPI_INT, g2, N, MPI_INT, ic2, &r[K + 2]));
    int n = K + 3;
    if ((s_color + s_lrank) % 3 == 0) {
        for (int i = n - 1; i >= 0; i--)
            MT_MPI(MPI_Wait(&r[i], MPI_STATUS_IGNORE));
    } else if ((s_color + s_lrank) % 3 == 1) {
        for (int done = 0; done < n; done++) {
            int idx;
            MT_MPI(MPI_Waitany(n, r, &idx, MPI_STATUS_IGNORE));
        }
    } else {
        int flag = 0;
        while (!flag)
            MT_MPI(MPI_Testall(n, r, &flag, MPI_STATUSES_IGNORE));
    }
    for (int k = 0; k < K; k++)
        for (int e = 0; e < N + 2; e++) {
            int want = 0;
            for (int j = 0; j < s_rsize; j++)
                want += val(s_rworld[j], k, e, 0);
            MT_EQ(ra[k][e], want, "outstanding iallreduce");
        }
    if (broot >= 0)
        for (int e = 0; e < N; e++)
            MT_EQ(b[e], val(s_rworld[broot], 9, e, 0), "outstanding ibcast");
    for (int j = 0; j < s_rsize; j++)
        for (int e = 0; e < N; e++)
            MT_EQ(g2[j * N + e], val(s_rworld[j], 3, e, 0),
                  "outstanding iallgather");
}

/* The new intercommunicator is a working duplicate of ic. */
static void check_dup(MPI_Comm ic, MPI_Comm d)
{
    int flag, sz, rk, result;
    MT_MPI(MPI_Comm_test_inter(d, &flag));
    MT_EQ(flag, 1, "idup of an intercommunicator is one");
    MT_MPI(MPI_Comm_size(d, &sz));
    MT_MPI(MPI_Comm_rank(d, &rk));
    MT_EQ(sz, s_lsize, "idup size");
    MT_EQ(rk, s_lrank, "idup rank");
    MT_MPI(MPI_Comm_remote_size(d, &sz));
    MT_EQ(sz, s_rsize, "idup remote size");
    MT_MPI(MPI_Comm_compare(ic, d, &result));
    MT_EQ(result, MPI_CONGRUENT, "idup is congruent");
    int v = mt_rank, sum = -1, want = 0;
    MT_MPI(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, d));
    for (int j = 0; j < s_rsize; j++)
        want += s_rworld[j];
    MT_EQ(sum, want, "allreduce on the idup");
    /* Its traffic does not mix with ic's. */
    MPI_Request rq;
    int x = 1, y = 2, gx = -1, gy = -1;
    if (s_color == 0 && s_lrank == 0) {
        MT_MPI(MPI_Isend(&x, 1, MPI_INT, 0, 0, ic, &rq));
        MT_MPI(MPI_Send(&y, 1, MPI_INT, 0, 0, d));
        MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else if (s_color == 1 && s_lrank == 0) {
        MT_MPI(MPI_Recv(&gy, 1, MPI_INT, 0, 0, d, MPI_STATUS_IGNORE));
        MT_MPI(MPI_Recv(&gx, 1, MPI_INT, 0, 0, ic, MPI_STATUS_IGNORE));
        MT_EQ(gx, 1, "ic message");
        MT_EQ(gy, 2, "dup message");
    }
}

static void check_idup(MPI_Comm ic, MPI_Comm ic2)
{
    /* Started by one group while the other waits for its messages. */
    for (int early = 0; early < 2; early++) {
        MPI_Comm d;
        MPI_Request req;
        if (s_color == early) {
            MT_MPI(MPI_Comm_idup(ic, &d, &req));
            early_send(200 + early);
        } else {
            late_recv(200 + early);
            MT_MPI(MPI_Comm_idup_with_info(ic, MPI_INFO_NULL, &d, &req));
        }
        MT_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        check_dup(ic, d);
        MT_MPI(MPI_Comm_free(&d));
    }
    /* Two at once, in opposite orders on the two groups, then a
     * collective on ic before either has completed. */
    MPI_Comm d1, d2;
    MPI_Request r[3];
    int v = mt_rank, sum = -1, want = 0;
    for (int j = 0; j < s_rsize; j++)
        want += s_rworld[j];
    if (s_color == 0) {
        MT_MPI(MPI_Comm_idup(ic, &d1, &r[0]));
        MT_MPI(MPI_Comm_idup(ic2, &d2, &r[1]));
    } else {
        MT_MPI(MPI_Comm_idup(ic2, &d2, &r[1]));
        MT_MPI(MPI_Comm_idup(ic, &d1, &r[0]));
    }
    MT_MPI(MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, ic, &r[2]));
    MT_MPI(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
    MT_EQ(sum, want, "iallreduce between two idups");
    check_dup(ic, d1);
    check_dup(ic2, d2);
    MT_MPI(MPI_Comm_free(&d1));
    MT_MPI(MPI_Comm_free(&d2));
}

static void run(int mode)
{
    s_color = mode == 0 ? mt_rank % 2 : mt_rank != 0;
    MPI_Comm local, ic, ic2;
    MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, s_color, mt_rank, &local));
    MT_MPI(MPI_Comm_rank(local, &s_lrank));
    MT_MPI(MPI_Comm_size(local, &s_lsize));
    int other = mode == 0 ? (s_color == 0 ? 1 : 0) : (s_color == 0 ? 1 : 0);
    MT_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, other, 11, &ic));
    MT_MPI(MPI_Comm_remote_size(ic, &s_rsize));
    s_lworld = malloc((size_t)s_lsize * sizeof(int));
    s_rworld = malloc((size_t)s_rsize * sizeof(int));
    MT_MPI(MPI_Allgather(&mt_rank, 1, MPI_INT, s_lworld, 1, MPI_INT, local));
    MT_MPI(MPI_Allgather(&mt_rank, 1, MPI_INT, s_rworld, 1, MPI_INT, ic));
    MT_MPI(MPI_Comm_dup(ic, &ic2));

    check_forms(ic);
    check_not_blocking(ic);
    check_outstanding(ic, ic2);
    check_idup(ic, ic2);

    MT_MPI(MPI_Comm_free(&ic2));
    MT_MPI(MPI_Comm_free(&ic));
    MT_MPI(MPI_Comm_free(&local));
    free(s_lworld);
    free(s_rworld);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    s_sb = malloc(NE * sizeof(int));
    s_rb = malloc(NE * sizeof(int));
    s_want = malloc(NE * sizeof(int));
    MT_MPI(MPI_Type_contiguous(2, MPI_UNSIGNED, &s_affine));
    MT_MPI(MPI_Type_commit(&s_affine));
    MT_MPI(MPI_Op_create(compose_fn, 0, &s_compose));
    if (mt_size >= 2) {
        run(0);
        run(1);
    }
    MT_MPI(MPI_Op_free(&s_compose));
    MT_MPI(MPI_Type_free(&s_affine));
    free(s_sb);
    free(s_rb);
    free(s_want);
    return mt_finish("intercomm_nb");
}
