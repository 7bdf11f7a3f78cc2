/* SPDX-License-Identifier: MIT */
/* Wildcard receives: MPI_ANY_SOURCE and MPI_ANY_TAG alone and together,
 * tag-selective matching that must skip queued messages with other tags,
 * and the status a receive returns (MPI_SOURCE, MPI_TAG, MPI_Get_count,
 * MPI_Get_elements, MPI_UNDEFINED for a partial element). Every rank takes
 * a turn as the receiving root, so every pair of ranks is exercised. */
#include "mpitest.h"

/* Message from 'src' with tag 'tag': its length in ints, chosen so sources
 * and tags give different sizes and one of them crosses 1 MiB. */
static int count_of(int src, int tag)
{
    if (tag == 33)
        return 300000; /* 1.2 MB */
    return 1 + src * 7 + tag % 5;
}

static void fill_msg(int *buf, int n, int src, int tag)
{
    for (int i = 0; i < n; i++)
        buf[i] = src * 1000003 + tag * 7919 + i;
}

static void check_msg(const char *what, const int *buf, const MPI_Status *st,
                      int want_src, int want_tag)
{
    int src = st->MPI_SOURCE, tag = st->MPI_TAG, c = -1, e = -1, d = 0;
    if (want_src >= 0)
        MT_EQ(src, want_src, what);
    if (want_tag >= 0)
        MT_EQ(tag, want_tag, what);
    MT_CHECK(src >= 0 && src < mt_size, "%s: MPI_SOURCE %d", what, src);
    int n = count_of(src, tag);
    MPI_Get_count(st, MPI_INT, &c);
    MT_EQ(c, n, "MPI_Get_count(MPI_INT)");
    MPI_Get_count(st, MPI_BYTE, &c);
    MT_EQ(c, n * 4, "MPI_Get_count(MPI_BYTE)");
    MPI_Get_elements(st, MPI_INT, &e);
    MT_EQ(e, n, "MPI_Get_elements(MPI_INT)");
    /* A byte count that is not a whole number of doubles is undefined. */
    MPI_Get_count(st, MPI_DOUBLE, &d);
    if ((n * 4) % 8)
        MT_EQ(d, MPI_UNDEFINED, "MPI_Get_count(MPI_DOUBLE) of odd ints");
    else
        MT_EQ(d, n / 2, "MPI_Get_count(MPI_DOUBLE)");
    for (int i = 0; i < n; i++)
        if (buf[i] != src * 1000003 + tag * 7919 + i)
            MT_FAIL("%s: from %d tag %d: int %d is %d, expected %d", what, src,
                    tag, i, buf[i], src * 1000003 + tag * 7919 + i);
}

/* Every non-root rank sends tags 21, 20, 33, 22 (in that order) and a
 * zero-byte tag 0 message; the root picks them out with wildcards. */
static void round_for(int root)
{
    static const int tags[] = {21, 20, 33, 22, 0};
    enum { NT = 5 };
    const int maxn = 300000;
    int n = mt_size;

    if (mt_rank != root) {
        MPI_Request req[NT];
        int *sb[NT];
        for (int t = 0; t < NT; t++) {
            int c = tags[t] == 0 ? 0 : count_of(mt_rank, tags[t]);
            sb[t] = mt_malloc((size_t)c * sizeof(int));
            fill_msg(sb[t], c, mt_rank, tags[t]);
            MT_MPI(MPI_Isend(sb[t], c, MPI_INT, root, tags[t], MPI_COMM_WORLD,
                             &req[t]));
        }
        /* The root's receives happen after this barrier: everything it
         * matches is already queued (or in flight) when it looks. */
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        MT_MPI(MPI_Waitall(NT, req, MPI_STATUSES_IGNORE));
        for (int t = 0; t < NT; t++)
            free(sb[t]);
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        return;
    }

    int *rb = mt_malloc((size_t)maxn * sizeof(int) + 64);
    int *seen = calloc((size_t)n, sizeof(int));
    MPI_Status st;
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* Tag 20 from anyone, although every sender queued tag 21 first. */
    for (int k = 0; k < n - 1; k++) {
        MT_MPI(MPI_Recv(rb, maxn, MPI_INT, MPI_ANY_SOURCE, 20, MPI_COMM_WORLD,
                        &st));
        check_msg("ANY_SOURCE tag 20", rb, &st, -1, 20);
        MT_CHECK(st.MPI_SOURCE != root && !seen[st.MPI_SOURCE],
                 "tag 20 twice from %d", st.MPI_SOURCE);
        seen[st.MPI_SOURCE] = 1;
    }
    /* From the highest other rank, any tag: must be its first, tag 21,
     * even though the other senders' messages are also queued. */
    int last = root == n - 1 ? n - 2 : n - 1;
    MT_MPI(MPI_Recv(rb, maxn, MPI_INT, last, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    check_msg("source+ANY_TAG", rb, &st, last, 21);
    /* The large tag 33 from everyone, wildcard source. */
    memset(seen, 0, (size_t)n * sizeof(int));
    for (int k = 0; k < n - 1; k++) {
        MT_MPI(MPI_Recv(rb, maxn, MPI_INT, MPI_ANY_SOURCE, 33, MPI_COMM_WORLD,
                        &st));
        check_msg("ANY_SOURCE large", rb, &st, -1, 33);
        MT_CHECK(!seen[st.MPI_SOURCE], "tag 33 twice from %d", st.MPI_SOURCE);
        seen[st.MPI_SOURCE] = 1;
    }
    /* Everything left, fully wildcarded: per source, what remains must come
     * in send order (21 unless taken above, then 22, then 0). */
    int left = (n - 1) * 3 - 1;
    int *pos = calloc((size_t)n, sizeof(int));
    for (int s = 0; s < n; s++)
        pos[s] = s == last ? 1 : 0;
    static const int rest[] = {21, 22, 0};
    for (int k = 0; k < left; k++) {
        rb[0] = -7;
        MT_MPI(MPI_Recv(rb, maxn, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                        MPI_COMM_WORLD, &st));
        int s = st.MPI_SOURCE;
        MT_CHECK(s >= 0 && s < n && s != root && pos[s] < 3,
                 "unexpected source %d", s);
        int want = rest[pos[s]++];
        if (want == 0) {
            int c = -1;
            MT_EQ(st.MPI_TAG, 0, "zero-byte message tag");
            MPI_Get_count(&st, MPI_INT, &c);
            MT_EQ(c, 0, "zero-byte message count");
            MT_EQ(rb[0], -7, "zero-byte message left the buffer alone");
        } else {
            check_msg("ANY_SOURCE+ANY_TAG", rb, &st, s, want);
        }
    }
    /* Nothing may be left over: a probe for any message must find none. */
    int flag = 1;
    MT_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                      MPI_STATUS_IGNORE));
    MT_EQ(flag, 0, "no message left after the round");
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    free(pos);
    free(seen);
    free(rb);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MT_CHECK(mt_size >= 2, "needs at least 2 ranks");
    for (int root = 0; root < mt_size; root++)
        round_for(root);
    /* MPI_STATUS_IGNORE must be accepted by a wildcard receive. */
    int v = mt_rank, w = -1;
    MT_MPI(MPI_Sendrecv(&v, 1, MPI_INT, (mt_rank + 1) % mt_size, 4, &w, 1,
                        MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    MT_EQ(w, (mt_rank + mt_size - 1) % mt_size, "Sendrecv with wildcards");
    return mt_finish("p2p_wildcard");
}
