/* SPDX-License-Identifier: MIT */
/* The large-count (MPI-4 "_c") collectives with count and displacement
 * arrays: Gatherv, Scatterv, Allgatherv, Alltoallv, Alltoallw,
 * Reduce_scatter and the neighbourhood Allgatherv, Alltoallv, Alltoallw,
 * each blocking, nonblocking (I*) and persistent (_init + Start), run with
 * the int form and the _c form on the same data: every result is checked
 * against the expected values and byte for byte against the int form's,
 * guard gaps between blocks included. Counts differ per rank and block.
 * Allgatherv_c and Gatherv_c also run on an intercommunicator. */
#include "mpitest.h"

enum { MAXP = 64, MAXN = 4096 };

static int P, R;

static int ival(int src, int dst, int i)
{
    return src * 100000 + dst * 1000 + i + 1;
}

/* A layout in both widths: counts n, displacements d (elements), d in
 * bytes (b) for the w forms, gap 1 element between blocks. */
struct vv {
    int n[MAXP], d[MAXP], b[MAXP];
    MPI_Count cn[MAXP];
    MPI_Aint cd[MAXP], cb[MAXP];
    int total;
};

static void vv_set(struct vv *v, int k, const int *counts)
{
    int off = 0;
    for (int r = 0; r < k; r++) {
        v->n[r] = counts[r];
        v->d[r] = off;
        v->b[r] = off * (int)sizeof(int);
        v->cn[r] = counts[r];
        v->cd[r] = off;
        v->cb[r] = (MPI_Aint)off * (MPI_Aint)sizeof(int);
        off += counts[r] + 1;
    }
    v->total = off;
    MT_CHECK(off <= MAXN, "layout of %d elements is too large", off);
}

/* Mode 0 blocking, 1 nonblocking, 2 persistent. 'nbk' and 'ini' name the
 * request &rq_. */
#define RUN3(mode, blk, nbk, ini)                                              \
    do {                                                                       \
        MPI_Request rq_ = MPI_REQUEST_NULL;                                    \
        if ((mode) == 0) {                                                     \
            MT_MPI(blk);                                                       \
        } else if ((mode) == 1) {                                              \
            MT_MPI(nbk);                                                       \
            MT_MPI(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                         \
        } else {                                                               \
            MT_MPI(ini);                                                       \
            for (int k_ = 0; k_ < 2; k_++) { /* restartable */                 \
                MT_MPI(MPI_Start(&rq_));                                       \
                MT_MPI(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                     \
            }                                                                  \
            MT_MPI(MPI_Request_free(&rq_));                                    \
        }                                                                      \
    } while (0)

#define W MPI_COMM_WORLD
#define INFO MPI_INFO_NULL

static int sbuf[MAXN], out[2][3][MAXN];

static void fill_out(void)
{
    for (int w = 0; w < 2; w++)
        for (int m = 0; m < 3; m++)
            for (int i = 0; i < MAXN; i++)
                out[w][m][i] = -1;
}

/* Every form gave the int blocking form's bytes. */
static void same_all(const char *what)
{
    for (int w = 0; w < 2; w++)
        for (int m = 0; m < 3; m++)
            MT_CHECK(memcmp(out[w][m], out[0][0], sizeof(out[0][0])) == 0,
                     "%s: %s form, mode %d differs from the int blocking "
                     "form",
                     what, w ? "_c" : "int", m);
}

static int scnt(int r)
{
    return r % 4 + 1;
}

static void gatherv(void)
{
    int root = P - 1, c[MAXP] = {0};
    for (int r = 0; r < P; r++)
        c[r] = scnt(r);
    struct vv v;
    vv_set(&v, P, c);
    for (int i = 0; i < scnt(R); i++)
        sbuf[i] = ival(R, root, i);
    fill_out();
    for (int m = 0; m < 3; m++) {
        int *o = out[0][m];
        RUN3(m,
             MPI_Gatherv(sbuf, scnt(R), MPI_INT, o, v.n, v.d, MPI_INT, root, W),
             MPI_Igatherv(sbuf, scnt(R), MPI_INT, o, v.n, v.d, MPI_INT, root, W,
                          &rq_),
             MPI_Gatherv_init(sbuf, scnt(R), MPI_INT, o, v.n, v.d, MPI_INT,
                              root, W, INFO, &rq_));
        o = out[1][m];
        RUN3(m,
             MPI_Gatherv_c(sbuf, scnt(R), MPI_INT, o, v.cn, v.cd, MPI_INT, root,
                           W),
             MPI_Igatherv_c(sbuf, scnt(R), MPI_INT, o, v.cn, v.cd, MPI_INT,
                            root, W, &rq_),
             MPI_Gatherv_init_c(sbuf, scnt(R), MPI_INT, o, v.cn, v.cd, MPI_INT,
                                root, W, INFO, &rq_));
    }
    same_all("Gatherv");
    if (R == root)
        for (int r = 0; r < P; r++) {
            for (int i = 0; i < c[r]; i++)
                MT_EQ(out[0][0][v.d[r] + i], ival(r, root, i), "Gatherv");
            MT_EQ(out[0][0][v.d[r] + c[r]], -1, "Gatherv gap");
        }
}

static void scatterv(void)
{
    int root = 0, c[MAXP] = {0};
    for (int r = 0; r < P; r++)
        c[r] = scnt(r);
    struct vv v;
    vv_set(&v, P, c);
    for (int r = 0; r < P; r++)
        for (int i = 0; i < c[r]; i++)
            sbuf[v.d[r] + i] = ival(root, r, i);
    fill_out();
    int n = scnt(R);
    for (int m = 0; m < 3; m++) {
        int *o = out[0][m];
        RUN3(m, MPI_Scatterv(sbuf, v.n, v.d, MPI_INT, o, n, MPI_INT, root, W),
             MPI_Iscatterv(sbuf, v.n, v.d, MPI_INT, o, n, MPI_INT, root, W,
                           &rq_),
             MPI_Scatterv_init(sbuf, v.n, v.d, MPI_INT, o, n, MPI_INT, root, W,
                               INFO, &rq_));
        o = out[1][m];
        RUN3(m,
             MPI_Scatterv_c(sbuf, v.cn, v.cd, MPI_INT, o, n, MPI_INT, root, W),
             MPI_Iscatterv_c(sbuf, v.cn, v.cd, MPI_INT, o, n, MPI_INT, root, W,
                             &rq_),
             MPI_Scatterv_init_c(sbuf, v.cn, v.cd, MPI_INT, o, n, MPI_INT, root,
                                 W, INFO, &rq_));
    }
    same_all("Scatterv");
    for (int i = 0; i < n; i++)
        MT_EQ(out[0][0][i], ival(root, R, i), "Scatterv");
    MT_EQ(out[0][0][n], -1, "Scatterv guard");
}

static void allgatherv(void)
{
    int c[MAXP] = {0};
    for (int r = 0; r < P; r++)
        c[r] = scnt(r);
    struct vv v;
    vv_set(&v, P, c);
    for (int i = 0; i < scnt(R); i++)
        sbuf[i] = ival(R, 0, i);
    fill_out();
    int n = scnt(R);
    for (int m = 0; m < 3; m++) {
        int *o = out[0][m];
        RUN3(m, MPI_Allgatherv(sbuf, n, MPI_INT, o, v.n, v.d, MPI_INT, W),
             MPI_Iallgatherv(sbuf, n, MPI_INT, o, v.n, v.d, MPI_INT, W, &rq_),
             MPI_Allgatherv_init(sbuf, n, MPI_INT, o, v.n, v.d, MPI_INT, W,
                                 INFO, &rq_));
        o = out[1][m];
        RUN3(m, MPI_Allgatherv_c(sbuf, n, MPI_INT, o, v.cn, v.cd, MPI_INT, W),
             MPI_Iallgatherv_c(sbuf, n, MPI_INT, o, v.cn, v.cd, MPI_INT, W,
                               &rq_),
             MPI_Allgatherv_init_c(sbuf, n, MPI_INT, o, v.cn, v.cd, MPI_INT, W,
                                   INFO, &rq_));
    }
    same_all("Allgatherv");
    for (int r = 0; r < P; r++) {
        for (int i = 0; i < c[r]; i++)
            MT_EQ(out[0][0][v.d[r] + i], ival(r, 0, i), "Allgatherv");
        MT_EQ(out[0][0][v.d[r] + c[r]], -1, "Allgatherv gap");
    }
}

/* Elements rank s sends rank d in the all-to-alls. */
static int a2a(int s, int d)
{
    return (s + 2 * d) % 3 + 1;
}

static void alltoallvw(void)
{
    int sc[MAXP] = {0}, rc[MAXP] = {0};
    MPI_Datatype types[MAXP];
    for (int r = 0; r < P; r++) {
        sc[r] = a2a(R, r);
        rc[r] = a2a(r, R);
        types[r] = MPI_INT;
    }
    struct vv s, v;
    vv_set(&s, P, sc);
    vv_set(&v, P, rc);
    for (int r = 0; r < P; r++)
        for (int i = 0; i < sc[r]; i++)
            sbuf[s.d[r] + i] = ival(R, r, i);
    for (int w = 0; w < 2; w++) {
        fill_out();
        for (int m = 0; m < 3; m++) {
            int *o = out[0][m];
            if (!w)
                RUN3(m,
                     MPI_Alltoallv(sbuf, s.n, s.d, MPI_INT, o, v.n, v.d,
                                   MPI_INT, W),
                     MPI_Ialltoallv(sbuf, s.n, s.d, MPI_INT, o, v.n, v.d,
                                    MPI_INT, W, &rq_),
                     MPI_Alltoallv_init(sbuf, s.n, s.d, MPI_INT, o, v.n, v.d,
                                        MPI_INT, W, INFO, &rq_));
            else
                RUN3(
                    m,
                    MPI_Alltoallw(sbuf, s.n, s.b, types, o, v.n, v.b, types, W),
                    MPI_Ialltoallw(sbuf, s.n, s.b, types, o, v.n, v.b, types, W,
                                   &rq_),
                    MPI_Alltoallw_init(sbuf, s.n, s.b, types, o, v.n, v.b,
                                       types, W, INFO, &rq_));
            o = out[1][m];
            if (!w)
                RUN3(m,
                     MPI_Alltoallv_c(sbuf, s.cn, s.cd, MPI_INT, o, v.cn, v.cd,
                                     MPI_INT, W),
                     MPI_Ialltoallv_c(sbuf, s.cn, s.cd, MPI_INT, o, v.cn, v.cd,
                                      MPI_INT, W, &rq_),
                     MPI_Alltoallv_init_c(sbuf, s.cn, s.cd, MPI_INT, o, v.cn,
                                          v.cd, MPI_INT, W, INFO, &rq_));
            else
                RUN3(m,
                     MPI_Alltoallw_c(sbuf, s.cn, s.cb, types, o, v.cn, v.cb,
                                     types, W),
                     MPI_Ialltoallw_c(sbuf, s.cn, s.cb, types, o, v.cn, v.cb,
                                      types, W, &rq_),
                     MPI_Alltoallw_init_c(sbuf, s.cn, s.cb, types, o, v.cn,
                                          v.cb, types, W, INFO, &rq_));
        }
        const char *what = w ? "Alltoallw" : "Alltoallv";
        same_all(what);
        for (int r = 0; r < P; r++) {
            for (int i = 0; i < rc[r]; i++)
                MT_EQ(out[0][0][v.d[r] + i], ival(r, R, i), what);
            MT_EQ(out[0][0][v.d[r] + rc[r]], -1, what);
        }
    }
}

static void reduce_scatter(void)
{
    int c[MAXP] = {0}, total = 0;
    for (int r = 0; r < P; r++) {
        c[r] = scnt(r);
        total += c[r];
    }
    MPI_Count cc[MAXP];
    for (int r = 0; r < P; r++)
        cc[r] = c[r];
    for (int j = 0; j < total; j++)
        sbuf[j] = R * 1000 + j;
    fill_out();
    int off = 0;
    for (int r = 0; r < R; r++)
        off += c[r];
    for (int m = 0; m < 3; m++) {
        int *o = out[0][m];
        RUN3(m, MPI_Reduce_scatter(sbuf, o, c, MPI_INT, MPI_SUM, W),
             MPI_Ireduce_scatter(sbuf, o, c, MPI_INT, MPI_SUM, W, &rq_),
             MPI_Reduce_scatter_init(sbuf, o, c, MPI_INT, MPI_SUM, W, INFO,
                                     &rq_));
        o = out[1][m];
        RUN3(m, MPI_Reduce_scatter_c(sbuf, o, cc, MPI_INT, MPI_SUM, W),
             MPI_Ireduce_scatter_c(sbuf, o, cc, MPI_INT, MPI_SUM, W, &rq_),
             MPI_Reduce_scatter_init_c(sbuf, o, cc, MPI_INT, MPI_SUM, W, INFO,
                                       &rq_));
    }
    same_all("Reduce_scatter");
    for (int i = 0; i < c[R]; i++)
        MT_EQ(out[0][0][i], 1000 * P * (P - 1) / 2 + P * (off + i),
              "Reduce_scatter");
    MT_EQ(out[0][0][c[R]], -1, "Reduce_scatter guard");
}

/* Neighbourhood forms on a periodic ring: block 0 to/from the left
 * neighbour, block 1 the right one. Block k sent carries k + 1 elements,
 * so block 0 received (the left neighbour's block 1) has 2, block 1 has
 * 1. */
static void neighbors(void)
{
    int dims[1] = {P}, periods[1] = {1};
    MPI_Comm ring;
    MT_MPI(MPI_Cart_create(W, 1, dims, periods, 0, &ring));
    int left, right;
    MT_MPI(MPI_Cart_shift(ring, 0, 1, &left, &right));
    int src[2] = {left, right};
    MPI_Datatype types[2] = {MPI_INT, MPI_INT};

    /* Allgatherv: my scnt(R) elements to both; from each its own. */
    int gc[2] = {scnt(left), scnt(right)};
    struct vv g;
    vv_set(&g, 2, gc);
    for (int i = 0; i < scnt(R); i++)
        sbuf[i] = ival(R, 0, i);
    fill_out();
    int n = scnt(R);
    for (int m = 0; m < 3; m++) {
        int *o = out[0][m];
        RUN3(m,
             MPI_Neighbor_allgatherv(sbuf, n, MPI_INT, o, g.n, g.d, MPI_INT,
                                     ring),
             MPI_Ineighbor_allgatherv(sbuf, n, MPI_INT, o, g.n, g.d, MPI_INT,
                                      ring, &rq_),
             MPI_Neighbor_allgatherv_init(sbuf, n, MPI_INT, o, g.n, g.d,
                                          MPI_INT, ring, INFO, &rq_));
        o = out[1][m];
        RUN3(m,
             MPI_Neighbor_allgatherv_c(sbuf, n, MPI_INT, o, g.cn, g.cd, MPI_INT,
                                       ring),
             MPI_Ineighbor_allgatherv_c(sbuf, n, MPI_INT, o, g.cn, g.cd,
                                        MPI_INT, ring, &rq_),
             MPI_Neighbor_allgatherv_init_c(sbuf, n, MPI_INT, o, g.cn, g.cd,
                                            MPI_INT, ring, INFO, &rq_));
    }
    same_all("Neighbor_allgatherv");
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < gc[k]; i++)
            MT_EQ(out[0][0][g.d[k] + i], ival(src[k], 0, i),
                  "Neighbor_allgatherv");
        MT_EQ(out[0][0][g.d[k] + gc[k]], -1, "Neighbor_allgatherv gap");
    }

    /* Alltoallv and alltoallw. */
    int sc[2] = {1, 2}, rc[2] = {2, 1};
    struct vv s, v;
    vv_set(&s, 2, sc);
    vv_set(&v, 2, rc);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < sc[k]; i++)
            sbuf[s.d[k] + i] = ival(R, k, i);
    for (int w = 0; w < 2; w++) {
        fill_out();
        for (int m = 0; m < 3; m++) {
            int *o = out[0][m];
            if (!w)
                RUN3(m,
                     MPI_Neighbor_alltoallv(sbuf, s.n, s.d, MPI_INT, o, v.n,
                                            v.d, MPI_INT, ring),
                     MPI_Ineighbor_alltoallv(sbuf, s.n, s.d, MPI_INT, o, v.n,
                                             v.d, MPI_INT, ring, &rq_),
                     MPI_Neighbor_alltoallv_init(sbuf, s.n, s.d, MPI_INT, o,
                                                 v.n, v.d, MPI_INT, ring, INFO,
                                                 &rq_));
            else
                RUN3(m,
                     MPI_Neighbor_alltoallw(sbuf, s.n, s.cb, types, o, v.n,
                                            v.cb, types, ring),
                     MPI_Ineighbor_alltoallw(sbuf, s.n, s.cb, types, o, v.n,
                                             v.cb, types, ring, &rq_),
                     MPI_Neighbor_alltoallw_init(sbuf, s.n, s.cb, types, o, v.n,
                                                 v.cb, types, ring, INFO,
                                                 &rq_));
            o = out[1][m];
            if (!w)
                RUN3(m,
                     MPI_Neighbor_alltoallv_c(sbuf, s.cn, s.cd, MPI_INT, o,
                                              v.cn, v.cd, MPI_INT, ring),
                     MPI_Ineighbor_alltoallv_c(sbuf, s.cn, s.cd, MPI_INT, o,
                                               v.cn, v.cd, MPI_INT, ring, &rq_),
                     MPI_Neighbor_alltoallv_init_c(sbuf, s.cn, s.cd, MPI_INT, o,
                                                   v.cn, v.cd, MPI_INT, ring,
                                                   INFO, &rq_));
            else
                RUN3(m,
                     MPI_Neighbor_alltoallw_c(sbuf, s.cn, s.cb, types, o, v.cn,
                                              v.cb, types, ring),
                     MPI_Ineighbor_alltoallw_c(sbuf, s.cn, s.cb, types, o, v.cn,
                                               v.cb, types, ring, &rq_),
                     MPI_Neighbor_alltoallw_init_c(sbuf, s.cn, s.cb, types, o,
                                                   v.cn, v.cb, types, ring,
                                                   INFO, &rq_));
        }
        const char *what = w ? "Neighbor_alltoallw" : "Neighbor_alltoallv";
        same_all(what);
        /* Block 0 is the left neighbour's block 1, block 1 the right
         * neighbour's block 0. */
        for (int k = 0; k < 2; k++) {
            for (int i = 0; i < rc[k]; i++)
                MT_EQ(out[0][0][v.d[k] + i], ival(src[k], 1 - k, i), what);
            MT_EQ(out[0][0][v.d[k] + rc[k]], -1, what);
        }
    }
    MT_MPI(MPI_Comm_free(&ring));
}

/* On an intercommunicator (even world ranks against odd ones): the
 * blocking Allgatherv and Gatherv, int and _c forms alike. */
static void inter(void)
{
    MPI_Comm local, ic;
    int color = R % 2, me = R / 2;
    MT_MPI(MPI_Comm_split(W, color, R, &local));
    MT_MPI(MPI_Intercomm_create(local, 0, W, 1 - color, 99, &ic));
    int rsize;
    MT_MPI(MPI_Comm_remote_size(ic, &rsize));
    int c[MAXP] = {0};
    for (int j = 0; j < rsize; j++)
        c[j] = scnt(j);
    struct vv v;
    vv_set(&v, rsize, c);
    int n = scnt(me);
    for (int i = 0; i < n; i++)
        sbuf[i] = ival(R, 0, i);
    fill_out();
    MT_MPI(MPI_Allgatherv(sbuf, n, MPI_INT, out[0][0], v.n, v.d, MPI_INT, ic));
    MT_MPI(
        MPI_Allgatherv_c(sbuf, n, MPI_INT, out[1][0], v.cn, v.cd, MPI_INT, ic));
    for (int j = 0; j < rsize; j++) {
        for (int i = 0; i < c[j]; i++)
            MT_EQ(out[0][0][v.d[j] + i], ival(2 * j + 1 - color, 0, i),
                  "intercommunicator Allgatherv");
        MT_EQ(out[0][0][v.d[j] + c[j]], -1, "intercommunicator gap");
    }
    MT_CHECK(memcmp(out[0][0], out[1][0], sizeof(out[0][0])) == 0,
             "intercommunicator Allgatherv_c differs from Allgatherv");
    /* Gatherv to rank 0 of the even group. */
    int root = color ? 0 : (me == 0 ? MPI_ROOT : MPI_PROC_NULL);
    MT_MPI(
        MPI_Gatherv(sbuf, n, MPI_INT, out[0][1], v.n, v.d, MPI_INT, root, ic));
    MT_MPI(MPI_Gatherv_c(sbuf, n, MPI_INT, out[1][1], v.cn, v.cd, MPI_INT, root,
                         ic));
    MT_CHECK(memcmp(out[0][1], out[1][1], sizeof(out[0][1])) == 0,
             "intercommunicator Gatherv_c differs from Gatherv");
    if (root == MPI_ROOT)
        for (int j = 0; j < rsize; j++)
            MT_EQ(out[1][1][v.d[j]], ival(2 * j + 1, 0, 0),
                  "intercommunicator Gatherv_c");
    MT_MPI(MPI_Comm_free(&ic));
    MT_MPI(MPI_Comm_free(&local));
}

static void errors(void)
{
    MPI_Count cn[MAXP];
    MPI_Aint cd[MAXP];
    for (int r = 0; r < P; r++) {
        cn[r] = 1;
        cd[r] = r;
    }
    cn[P - 1] = -1;
    MPI_Comm_set_errhandler(W, MPI_ERRORS_RETURN);
    MT_ERRCLASS(
        MPI_Allgatherv_c(sbuf, 1, MPI_INT, out[0][0], cn, cd, MPI_INT, W),
        MPI_ERR_COUNT, "Allgatherv_c negative recvcount");
    MT_ERRCLASS(
        MPI_Allgatherv_c(sbuf, 1, MPI_INT, out[0][0], cn, NULL, MPI_INT, W),
        MPI_ERR_COUNT, "Allgatherv_c negative count before NULL displs");
    MPI_Comm_set_errhandler(W, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    P = mt_size;
    R = mt_rank;
    MT_CHECK(P <= MAXP, "at most %d ranks", MAXP);
    gatherv();
    scatterv();
    allgatherv();
    alltoallvw();
    reduce_scatter();
    neighbors();
    inter();
    errors();
    return mt_finish("coll_vc");
}
