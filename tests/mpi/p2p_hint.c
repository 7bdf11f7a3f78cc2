/* SPDX-License-Identifier: MIT */
/* Receive hints (p2p/p2p.c): a rank blocked in a receive tells its
 * senders, and FERRY_PROTO=auto then sends a blocking message above the
 * eager limit by the rendezvous instead of pushing it whole. Ranks 0 and 1
 * (any others only take part in the barriers):
 * - early: rank 1 blocks in MPI_Recv (and in MPI_Wait on an Irecv) while
 *   rank 0 sleeps, then sends 8-64 KiB: every byte arrives, and (with the
 *   default protocol settings) the counters show the rendezvous, or the
 *   write protocol for 64 KiB into a blocking receive, no push;
 * - late: rank 1 sleeps before receiving: the sends are pushed whole (as
 *   all are when this node's ranks outnumber its cores: no hints there);
 * - programs that count on blocking sends of this size being buffered
 *   (MPI calls them unsafe; every MPI here buffers them) must still run:
 *   a blocked receive on another tag, and one that an earlier eager
 *   message satisfies while the large send is decided. A hint that let
 *   these go by the rendezvous would deadlock them (run where the
 *   protocol setting buffers such sends: the default, Push-All).
 * - a late receiver's prompt reply (seed 001's late ping-pong): rank 1
 *   reads rank 0's large message itself, then answers with MPI_Isend
 *   while rank 0 waits in MPI_Recv; under auto the reply is not written
 *   into rank 0's buffer when both copies would not fit half of rank 1's
 *   L2 cache (proto.c's copies_fit): rank 0 reads it. */
#include <unistd.h>

#include "mpitest.h"

#define CAP 65536
static const int sizes[] = {8192, 32768, 65536};
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))
#define ROUNDS 3

static unsigned long long rndv(void)
{
    return mt_pvar("ferry_rndv_get_msgs") + mt_pvar("ferry_rndv_put_msgs");
}

/* Whether the counters must show the default protocol's choices: Ferry,
 * FERRY_PROTO and the push limits at their defaults, one node. */
static int defaults(void)
{
    int i = -1;
    return MPI_T_pvar_get_index("ferry_pushed_msgs", MPI_T_PVAR_CLASS_COUNTER,
                                &i) == MPI_SUCCESS &&
           !getenv("FERRY_PROTO") && !getenv("FERRY_AUTO_PUSH_MAX") &&
           !getenv("FERRY_EAGER_MAX") && !getenv("FERRY_NODES") &&
           !getenv("FERRY_CELL_SIZE") && !getenv("FERRY_RECV_WRITE_MIN");
}

/* Whether this protocol setting buffers a blocking 32 KiB send (the
 * default pushes it whole, as Push-All does; the plain rendezvous and
 * Push-Pull do not, and the unsafe programs below would hang there by
 * design). */
static int buffers_32k(void)
{
    const char *p = getenv("FERRY_PROTO");
    return (!p || !strcmp(p, "auto") || !strcmp(p, "pushall")) &&
           !getenv("FERRY_AUTO_PUSH_MAX");
}

/* Whether hints are on: not when this node's ranks outnumber its CPUs
 * (or FERRY_WAIT chose the waiting mode), where a blocked receiver may be
 * off its core and the sender pushes regardless. */
static int hints_on(void)
{
    return !getenv("FERRY_WAIT") &&
           mt_node_size() <= sysconf(_SC_NPROCESSORS_ONLN);
}

static void early_late(unsigned char *b, int late)
{
    int hints = hints_on();
    unsigned long long push0 = mt_pvar("ferry_pushed_msgs"), rndv0 = rndv();
    unsigned long long write0 = mt_pvar("ferry_write_msgs");
    int n = 0;
    for (int si = 0; si < NSIZES; si++) {
        for (int k = 0; k < ROUNDS; k++, n++) {
            uint32_t seed = (uint32_t)(late * 100 + si * 10 + k + 1);
            MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
            if (mt_rank == 0) {
                if (!late)
                    usleep(20000); /* rank 1 is blocked by now */
                mt_fill(b, (size_t)sizes[si], seed);
                MT_MPI(MPI_Send(b, sizes[si], MPI_BYTE, 1, 5, MPI_COMM_WORLD));
            } else if (mt_rank == 1) {
                if (late)
                    usleep(20000); /* the message is here by now */
                memset(b, 0, CAP);
                MPI_Status st;
                int c = -1;
                if (k % 2) {
                    MPI_Request r;
                    MT_MPI(MPI_Irecv(b, CAP, MPI_BYTE, 0,
                                     si % 2 ? MPI_ANY_TAG : 5, MPI_COMM_WORLD,
                                     &r));
                    MT_MPI(MPI_Wait(&r, &st));
                } else {
                    MT_MPI(
                        MPI_Recv(b, CAP, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &st));
                }
                MPI_Get_count(&st, MPI_BYTE, &c);
                MT_EQ(c, sizes[si], late ? "late count" : "early count");
                MT_VERIFY(b, (size_t)sizes[si], seed,
                          late ? "late receiver" : "early receiver");
            }
        }
    }
    if (mt_rank == 1 && defaults()) {
        unsigned long long pushed = mt_pvar("ferry_pushed_msgs") - push0;
        unsigned long long rv = rndv() - rndv0;
        unsigned long long wr = mt_pvar("ferry_write_msgs") - write0;
        /* A blocking receive of 64 KiB offers its buffer (FERRY_RECV_
         * WRITE_MIN's default for blocking receives): the 64 KiB messages
         * it waits for are written into it, whether hints are on or not;
         * a late receive offers nothing. */
        if (late) {
            MT_EQ(pushed, (unsigned long long)n,
                  "messages pushed to a late receiver");
            MT_EQ(wr, 0ull, "messages written for a late receiver");
        } else if (!hints) {
            MT_EQ(pushed + wr, (unsigned long long)n,
                  "messages pushed or written, ranks outnumbering cores");
        } else {
            MT_EQ(pushed, 0ull, "messages pushed to a blocked receiver");
            MT_EQ(rv + wr, (unsigned long long)n,
                  "rendezvous or written messages to a blocked receiver");
        }
    }
}

/* A ping-pong: each reply may wait (briefly) for the other side's hint
 * before it is sent; whichever way each message goes, its bytes must
 * arrive. */
static void ping_pong(unsigned char *b, int rounds)
{
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int k = 0; k < rounds && mt_rank < 2; k++) {
        int n = sizes[k % NSIZES];
        uint32_t seed = (uint32_t)(5000 + k);
        int peer = 1 - mt_rank;
        if (mt_rank == 0) {
            mt_fill(b, (size_t)n, seed);
            MT_MPI(MPI_Send(b, n, MPI_BYTE, peer, 3, MPI_COMM_WORLD));
            memset(b, 0, CAP);
            MT_MPI(MPI_Recv(b, CAP, MPI_BYTE, peer, 3, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            MT_VERIFY(b, (size_t)n, seed + 1, "pong");
        } else {
            memset(b, 0, CAP);
            MT_MPI(MPI_Recv(b, CAP, MPI_BYTE, peer, 3, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            MT_VERIFY(b, (size_t)n, seed, "ping");
            mt_fill(b, (size_t)n, seed + 1);
            MT_MPI(MPI_Send(b, n, MPI_BYTE, peer, 3, MPI_COMM_WORLD));
        }
    }
}

/* An exchange (MPI_Irecv, MPI_Send, MPI_Wait on both ranks): each rank's
 * blocking send hints at its posted receive from the other, and the
 * other's send may take the rendezvous on it; every byte must arrive. */
static void exchange(unsigned char *b, unsigned char *b2, int rounds)
{
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int k = 0; k < rounds && mt_rank < 2; k++) {
        int n = sizes[k % NSIZES], peer = 1 - mt_rank;
        MPI_Request q;
        memset(b2, 0, CAP);
        MT_MPI(MPI_Irecv(b2, CAP, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &q));
        mt_fill(b, (size_t)n, (uint32_t)(7000 + 2 * k + mt_rank));
        MT_MPI(MPI_Send(b, n, MPI_BYTE, peer, 4, MPI_COMM_WORLD));
        MT_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
        MT_VERIFY(b2, (size_t)n, (uint32_t)(7000 + 2 * k + peer), "exchange");
    }
}

/* The same above FERRY_RECV_WRITE_MIN for MPI_Irecv (256 KiB by
 * default): each receive offers its
 * buffer, and a sender that sees the other in its send declines the
 * offer and lets it read (proto.c), one that does not writes. */
static void big_exchange(int rounds)
{
    const int n = 300007;
    unsigned char *sb = mt_malloc((size_t)n), *rb = mt_malloc((size_t)n + 64);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int k = 0; k < rounds && mt_rank < 2; k++) {
        int peer = 1 - mt_rank;
        MPI_Request q;
        memset(rb, 0, (size_t)n + 64);
        MT_MPI(MPI_Irecv(rb, n, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &q));
        mt_fill(sb, (size_t)n, (uint32_t)(9000 + 2 * k + mt_rank));
        MT_MPI(MPI_Send(sb, n, MPI_BYTE, peer, 6, MPI_COMM_WORLD));
        MT_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
        MT_VERIFY(rb, (size_t)n, (uint32_t)(9000 + 2 * k + peer),
                  "large exchange");
        for (int i = 0; i < 64; i++)
            MT_CHECK(rb[n + i] == 0, "byte %d past the receive written", i);
    }
    free(sb);
    free(rb);
}

/* Whether ranks 0 and 1 share a node (the rule is about one core making
 * both copies; across nodes the network channel moves the bytes). */
static int same_node_01(void)
{
    MPI_Comm node;
    int in = mt_rank < 2, both = 0;
    MT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                               MPI_INFO_NULL, &node));
    MT_MPI(MPI_Allreduce(&in, &both, 1, MPI_INT, MPI_SUM, node));
    MT_MPI(MPI_Comm_free(&node));
    /* both is the number of ranks 0, 1 on this rank's node */
    MT_MPI(MPI_Bcast(&both, 1, MPI_INT, 0, MPI_COMM_WORLD));
    return both == 2;
}

/* Half this core's L2 cache, as proto.c reckons it. */
static size_t half_l2(void)
{
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? (size_t)l2 / 2 : (size_t)1 << 20;
}

static void late_reply(int rounds)
{
    size_t n = half_l2();
    if (n < ((size_t)1 << 20))
        n = (size_t)1 << 20;
    n += 3;
    unsigned char *sb = mt_malloc(n), *rb = mt_malloc(n + 64);
    unsigned long long write0 = mt_pvar("ferry_write_msgs");
    int same = same_node_01();
    for (int k = 0; k < rounds; k++) {
        uint32_t seed = (uint32_t)(11000 + 2 * k);
        int peer = 1 - mt_rank;
        MPI_Request q;
        memset(rb, 0, n + 64);
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (mt_rank == 0) {
            mt_fill(sb, n, seed);
            MT_MPI(
                MPI_Isend(sb, (int)n, MPI_BYTE, peer, 8, MPI_COMM_WORLD, &q));
            MT_MPI(MPI_Recv(rb, (int)n, MPI_BYTE, peer, 8, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            MT_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
            MT_VERIFY(rb, n, seed + 1, "late receiver's reply");
        } else if (mt_rank == 1) {
            /* Late: the message is here before the receive is posted. */
            MT_MPI(MPI_Probe(peer, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MT_MPI(MPI_Recv(rb, (int)n, MPI_BYTE, peer, 8, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            MT_VERIFY(rb, n, seed, "late receiver's message");
            mt_fill(sb, n, seed + 1);
            MT_MPI(
                MPI_Isend(sb, (int)n, MPI_BYTE, peer, 8, MPI_COMM_WORLD, &q));
            MT_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
        }
        for (int i = 0; i < 64; i++)
            MT_CHECK(rb[n + i] == 0, "byte %d past the receive written", i);
    }
    if (mt_rank == 0 && defaults() && same)
        MT_EQ(mt_pvar("ferry_write_msgs") - write0, 0ull,
              "late receiver's replies written into rank 0's buffer");
    free(sb);
    free(rb);
}

/* Rank 1 blocks for tag 1; rank 0 first sends 32 KiB on tag 2, which only
 * buffering lets complete, then the tag-1 message. */
static void other_tag(unsigned char *b, unsigned char *b2)
{
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0) {
        usleep(10000);
        mt_fill(b, 32768, 7);
        MT_MPI(MPI_Send(b, 32768, MPI_BYTE, 1, 2, MPI_COMM_WORLD));
        mt_fill(b2, 100, 8);
        MT_MPI(MPI_Send(b2, 100, MPI_BYTE, 1, 1, MPI_COMM_WORLD));
    } else if (mt_rank == 1) {
        MT_MPI(MPI_Recv(b2, CAP, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        MT_VERIFY(b2, 100, 8, "tag 1 after a buffered tag 2");
        MT_MPI(MPI_Recv(b, CAP, MPI_BYTE, 0, 2, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        MT_VERIFY(b, 32768, 7, "buffered tag 2");
    }
}

/* Rank 1 blocks for tag 1; rank 0 sends 8 bytes on tag 1 (which satisfy
 * that receive) and at once 32 KiB on tag 1, then waits for rank 1's tag
 * 7, which rank 1 sends only after the small message: the 32 KiB send
 * must be buffered. Rounds with varying delays move the moment the large
 * send is decided across rank 1's receive. */
static void in_flight(unsigned char *b, unsigned char *b2, int rounds)
{
    for (int k = 0; k < rounds; k++) {
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        int tok = k;
        if (mt_rank == 0) {
            if (k % 3)
                usleep((useconds_t)(k % 7) * 100);
            mt_fill(b2, 8, (uint32_t)k + 1000);
            MT_MPI(MPI_Send(b2, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD));
            mt_fill(b, 32768, (uint32_t)k + 2000);
            MT_MPI(MPI_Send(b, 32768, MPI_BYTE, 1, 1, MPI_COMM_WORLD));
            MT_MPI(MPI_Recv(&tok, 1, MPI_INT, 1, 7, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            MT_EQ(tok, k, "token");
        } else if (mt_rank == 1) {
            if (k % 2)
                usleep((useconds_t)(k % 5) * 100);
            MT_MPI(MPI_Recv(b2, CAP, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            MT_VERIFY(b2, 8, (uint32_t)k + 1000, "small message first");
            MT_MPI(MPI_Send(&tok, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
            MT_MPI(MPI_Recv(b, CAP, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            MT_VERIFY(b, 32768, (uint32_t)k + 2000, "buffered 32 KiB");
        }
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MT_CHECK(mt_size >= 2, "needs at least 2 ranks");
    int provided;
    MT_MPI(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    unsigned char *b = mt_malloc(CAP), *b2 = mt_malloc(CAP);
    early_late(b, 0);
    early_late(b, 1);
    ping_pong(b, 300);
    exchange(b, b2, 300);
    big_exchange(100);
    late_reply(20);
    if (buffers_32k()) {
        other_tag(b, b2);
        in_flight(b, b2, 200);
    }
    free(b);
    free(b2);
    MT_MPI(MPI_T_finalize());
    return mt_finish("p2p_hint");
}
