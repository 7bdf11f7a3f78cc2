/* SPDX-License-Identifier: MIT */
/* MPI_THREAD_MULTIPLE under random point-to-point traffic, as a threaded
 * application would make it: T threads per rank (--threads, 1-8) each send
 * --n messages to random (rank, thread) destinations, sizes 0 B to --max
 * (70 % at most 256 B, the rest log-uniform: mailbox, cells, rendezvous,
 * the shared copy), by MPI_Send, Isend, Ssend, Issend or Send_init+Start;
 * and each receives what is addressed to it by Irecv from MPI_ANY_SOURCE
 * or from one expected source, Iprobe+Recv, Improbe+Mrecv, Improbe+Imrecv,
 * or an Irecv it cancels at once (a receive that matched anyway keeps its
 * message), completed through Testsome or, when the thread has nothing
 * else to do, a blocking Waitsome. All on MPI_COMM_WORLD: the tag names
 * (receiving thread, sending thread), so every thread receives only its
 * own messages while the library matches for all of them at once.
 *
 * Every byte is checked against a pattern of (source rank, source thread,
 * index), and the index is the next one the receiver expects from that
 * sending thread: a message delivered twice, lost, torn, or overtaking an
 * earlier one of the same thread and tag fails the test. Blocking sends go
 * only to a lower (rank, thread), so no cycle of threads blocks in sends to
 * each other; a thread waits in Waitsome only with a receive posted for
 * every sending thread it still expects messages from. A monitor thread
 * ends the job with each thread's state if nothing progresses for 60 s.
 *
 * --pool: a task farm instead. Every thread of a rank takes whatever
 * message comes next from MPI_ANY_SOURCE with MPI_ANY_TAG (Irecv,
 * Improbe+Mrecv or Imrecv, or an Irecv cancelled at once), the threads
 * competing for the same messages; the tag names the message (sending
 * thread, index), which must arrive exactly once on one thread of the
 * rank it was sent to, whole. The thread that takes the rank's last
 * message sends each other thread a zero-byte message with tag POOL_STOP
 * (nothing else is left for their posted receives to match).
 *
 * Safe with more ranks and threads than cores: blocked threads wait in the
 * library, which gives the core up. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

#include "mpitest.h"

enum { MAXT = 8, SLOTS = 4, IDLE_TURNS = 64, STALL_S = 60 };
enum { K_SEND, K_ISEND, K_SSEND, K_ISSEND, K_PERSIST, NKINDS };
enum { R_ANY, R_SRC, R_PROBE, R_MPROBE, R_IMRECV, R_CANCEL, NRMETHODS };
/* --pool: tag = sending thread * POOL_IDX + index; POOL_STOP above them
 * all, within the 32767 every MPI allows. */
enum { POOL_IDX = 4096, POOL_MAXT = 7, POOL_STOP = 32767 };

static int s_threads = 3, s_n = 200;
static size_t s_max = 256 * 1024;
static uint64_t s_seed = 1;
static atomic_long s_progress;
static atomic_int s_done;
static int s_pool;
/* --pool: messages this rank still expects, and which arrived (a byte per
 * (source rank, source thread, index)). */
static atomic_long s_pool_left;
static atomic_uchar *s_pool_got;

struct plan {
    int dest, dthread, kind;
    size_t len;
};

/* Message i of thread st of rank src: a pure function, so every rank
 * knows what it will receive without communicating. */
static struct plan plan_of(int src, int st, int i)
{
    uint64_t x = s_seed * 0x100000001b3ull ^ (uint64_t)src << 48 ^
                 (uint64_t)st << 40 ^ (uint64_t)i;
    mt_splitmix(&x);
    struct plan p;
    p.dest = (int)(mt_splitmix(&x) % (uint64_t)mt_size);
    p.dthread = (int)(mt_splitmix(&x) % (uint64_t)s_threads);
    if (p.dest == src && p.dthread == st) { /* never to itself */
        if (s_threads > 1)
            p.dthread = (p.dthread + 1) % s_threads;
        else
            p.dest = (p.dest + 1) % mt_size;
    }
    p.kind = (int)(mt_splitmix(&x) % NKINDS);
    if (mt_splitmix(&x) % 100 < 70) {
        p.len = (size_t)(mt_splitmix(&x) % 257);
    } else { /* an octave above 256 B, then a size within it */
        int oct = 0;
        while (((size_t)256 << oct) < s_max)
            oct++;
        size_t lo = (size_t)256 << (mt_splitmix(&x) % (uint64_t)oct);
        p.len = lo + 1 + (size_t)(mt_splitmix(&x) % lo);
    }
    if (p.len > s_max)
        p.len = s_max;
    return p;
}

static uint32_t seed_of(int src, int st, int i)
{
    return (uint32_t)(src * 7919 + st * 104729) ^ (uint32_t)i * 2654435761u ^
           (uint32_t)s_seed;
}

static int id_of(int rank, int t)
{
    return rank * s_threads + t;
}

struct thr {
    int t;
    uint64_t rng;
    /* Receiving: for each sending (rank, thread), the indexes of its
     * messages to us in its order, and how many have arrived. */
    int **list;   /* [rank * T + st] */
    int *count;   /* messages expected per stream */
    int *next;    /* per stream: arrived so far */
    int *left_st; /* per sending thread: messages still owed, any rank */
    int left;     /* in all */
    /* One receive request per sending thread (the tag's), then the sends. */
    MPI_Request req[MAXT + SLOTS];
    int rspec[MAXT]; /* the stream's receive names one source */
    unsigned char *rbuf[MAXT];
    /* Sending. */
    int sent, sends_out;
    unsigned char *sbuf[SLOTS + 1]; /* the last one for blocking sends */
    int sidx[SLOTS];
    int spersist[SLOTS];
    int pool_stopped; /* --pool: this thread receives no more */
    long recvd, cancelled, waits;
};
static struct thr s_thr[MAXT];

static int tag_of(int dthread, int st)
{
    return dthread * MAXT + st;
}

/* Message i of thread st of rank src, as received. */
static void check_message(struct thr *h, int src, int st, int i, int count,
                          const unsigned char *buf)
{
    struct plan p = plan_of(src, st, i);
    MT_EQ(count, (long long)p.len, "received length");
    char what[96];
    snprintf(what, sizeof what, "thread %d: message %d of rank %d thread %d",
             h->t, i, src, st);
    MT_VERIFY(buf, (size_t)count, seed_of(src, st, i), what);
    h->recvd++;
    atomic_fetch_add(&s_progress, 1);
}

/* A message from thread st of rank src arrived in buf: it must be the
 * next one that thread sends us, whole and unaltered. */
static void accept(struct thr *h, int st, int src, int count,
                   const unsigned char *buf)
{
    MT_CHECK(src >= 0 && src < mt_size, "thread %d: source %d", h->t, src);
    int k = src * s_threads + st;
    MT_CHECK(h->next[k] < h->count[k],
             "thread %d: a message from rank %d thread %d beyond the %d it "
             "sends us",
             h->t, src, st, h->count[k]);
    int i = h->list[k][h->next[k]++];
    check_message(h, src, st, i, count, buf);
    h->left_st[st]--;
    h->left--;
}

static void accept_status(struct thr *h, int st, const MPI_Status *s)
{
    int count = -1;
    MT_MPI(MPI_Get_count(s, MPI_BYTE, &count));
    MT_EQ(s->MPI_TAG, tag_of(h->t, st), "status tag");
    accept(h, st, s->MPI_SOURCE, count, h->rbuf[st]);
}

/* A source that still owes thread st's stream a message, at random. */
static int some_source(struct thr *h, int st)
{
    int start = (int)(mt_splitmix(&h->rng) % (uint64_t)mt_size);
    for (int j = 0; j < mt_size; j++) {
        int r = (start + j) % mt_size;
        int k = r * s_threads + st;
        if (h->next[k] < h->count[k])
            return r;
    }
    MT_FAIL("thread %d: no source owes stream %d", h->t, st);
}

/* How many ranks still owe thread st's stream a message. */
static int owing(const struct thr *h, int st)
{
    int n = 0;
    for (int r = 0; r < mt_size; r++)
        n += h->next[r * s_threads + st] < h->count[r * s_threads + st];
    return n;
}

/* For each sending thread we still expect messages from and have no
 * receive posted for: receive one now (probes) or post a receive. With
 * 'post_only' (before a blocking Waitsome) every such stream gets a
 * receive from MPI_ANY_SOURCE, and one from a single source while others
 * owe the stream too is cancelled first: a sender blocked on us (its
 * thread blocked in MPI_Ssend) may be another source, which could in turn
 * wait for us. */
static int recv_turn(struct thr *h, int post_only)
{
    int progress = 0;
    for (int st = 0; st < s_threads; st++) {
        int tag = tag_of(h->t, st), flag = 0;
        MPI_Status s;
        if (post_only && h->req[st] != MPI_REQUEST_NULL && h->rspec[st] &&
            owing(h, st) > 1) {
            MT_MPI(MPI_Cancel(&h->req[st]));
            MT_MPI(MPI_Wait(&h->req[st], &s));
            MT_MPI(MPI_Test_cancelled(&s, &flag));
            h->rspec[st] = 0;
            if (!flag) /* matched before the cancel */
                accept_status(h, st, &s);
            else
                h->cancelled++;
        }
        if (h->left_st[st] == 0 || h->req[st] != MPI_REQUEST_NULL)
            continue;
        unsigned char *buf = h->rbuf[st];
        int m = post_only ? R_ANY
                          : (int)(mt_splitmix(&h->rng) % (uint64_t)NRMETHODS);
        MPI_Message msg;
        switch (m) {
        case R_PROBE:
            MT_MPI(MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &s));
            if (flag) {
                int count = -1;
                MT_MPI(MPI_Get_count(&s, MPI_BYTE, &count));
                MT_CHECK(count >= 0 && (size_t)count <= s_max,
                         "probed length %d", count);
                MT_MPI(MPI_Recv(buf, count, MPI_BYTE, s.MPI_SOURCE, tag,
                                MPI_COMM_WORLD, &s));
                accept_status(h, st, &s);
                progress++;
                continue;
            }
            break;
        case R_MPROBE:
        case R_IMRECV:
            MT_MPI(MPI_Improbe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &msg,
                               &s));
            if (flag) {
                int count = -1;
                MT_MPI(MPI_Get_count(&s, MPI_BYTE, &count));
                MT_CHECK(count >= 0 && (size_t)count <= s_max,
                         "probed length %d", count);
                if (m == R_MPROBE) {
                    MT_MPI(MPI_Mrecv(buf, count, MPI_BYTE, &msg, &s));
                    accept_status(h, st, &s);
                } else { /* completed by Testsome/Waitsome */
                    MT_MPI(MPI_Imrecv(buf, count, MPI_BYTE, &msg, &h->req[st]));
                }
                progress++;
                continue;
            }
            break;
        case R_CANCEL:
            MT_MPI(MPI_Irecv(buf, (int)s_max, MPI_BYTE, MPI_ANY_SOURCE, tag,
                             MPI_COMM_WORLD, &h->req[st]));
            MT_MPI(MPI_Cancel(&h->req[st]));
            MT_MPI(MPI_Wait(&h->req[st], &s));
            MT_MPI(MPI_Test_cancelled(&s, &flag));
            if (!flag) { /* matched before the cancel: the message is ours */
                accept_status(h, st, &s);
                progress++;
                continue;
            }
            h->cancelled++;
            break;
        default:
            break;
        }
        /* Nothing there yet: post a receive for the stream. */
        int src = m == R_SRC ? some_source(h, st) : MPI_ANY_SOURCE;
        h->rspec[st] = src != MPI_ANY_SOURCE;
        MT_MPI(MPI_Irecv(buf, (int)s_max, MPI_BYTE, src, tag, MPI_COMM_WORLD,
                         &h->req[st]));
    }
    return progress;
}

/* --pool: a message this thread took from the rank's common pool. */
static void pool_accept(struct thr *h, const MPI_Status *s)
{
    int count = -1, src = s->MPI_SOURCE, tag = s->MPI_TAG;
    MT_MPI(MPI_Get_count(s, MPI_BYTE, &count));
    if (tag == POOL_STOP) {
        MT_EQ(src, mt_rank, "stop message's source");
        MT_EQ(count, 0, "stop message's length");
        h->pool_stopped = 1;
        return;
    }
    int st = tag / POOL_IDX, i = tag % POOL_IDX;
    MT_CHECK(src >= 0 && src < mt_size && tag >= 0 && st < s_threads &&
                 i < s_n && plan_of(src, st, i).dest == mt_rank,
             "thread %d: tag %d from rank %d names no message sent here", h->t,
             tag, src);
    size_t k = ((size_t)src * (size_t)s_threads + (size_t)st) * (size_t)s_n +
               (size_t)i;
    MT_CHECK(atomic_exchange(&s_pool_got[k], 1) == 0,
             "thread %d: message %d of rank %d thread %d received twice", h->t,
             i, src, st);
    check_message(h, src, st, i, count, h->rbuf[0]);
    if (atomic_fetch_sub(&s_pool_left, 1) == 1) {
        /* The rank's last message: the other threads' receives get a stop
         * message each (this thread has none posted now). */
        for (int t = 1; t < s_threads; t++)
            MT_MPI(MPI_Send(NULL, 0, MPI_BYTE, mt_rank, POOL_STOP,
                            MPI_COMM_WORLD));
        h->pool_stopped = 1;
    }
}

/* --pool: take the next message of any source and tag now (matched
 * probe, a receive cancelled at once that matched first) or post a
 * receive for it (with 'post_only', before a blocking Waitsome). */
static int pool_turn(struct thr *h, int post_only)
{
    if (h->pool_stopped || h->req[0] != MPI_REQUEST_NULL)
        return 0;
    static const int methods[] = {R_ANY, R_MPROBE, R_IMRECV, R_CANCEL};
    int m = post_only ? R_ANY : methods[mt_splitmix(&h->rng) % 4];
    int flag = 0;
    MPI_Status s;
    MPI_Message msg;
    if (m == R_MPROBE || m == R_IMRECV) {
        MT_MPI(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                           &msg, &s));
        if (!flag)
            m = R_ANY;
        else {
            int count = -1;
            MT_MPI(MPI_Get_count(&s, MPI_BYTE, &count));
            MT_CHECK(count >= 0 && (size_t)count <= s_max, "probed length %d",
                     count);
            if (m == R_IMRECV) { /* completed by Testsome/Waitsome */
                MT_MPI(
                    MPI_Imrecv(h->rbuf[0], count, MPI_BYTE, &msg, &h->req[0]));
                return 1;
            }
            MT_MPI(MPI_Mrecv(h->rbuf[0], count, MPI_BYTE, &msg, &s));
            pool_accept(h, &s);
            return 1;
        }
    }
    MT_MPI(MPI_Irecv(h->rbuf[0], (int)s_max, MPI_BYTE, MPI_ANY_SOURCE,
                     MPI_ANY_TAG, MPI_COMM_WORLD, &h->req[0]));
    if (m != R_CANCEL)
        return 0;
    MT_MPI(MPI_Cancel(&h->req[0]));
    MT_MPI(MPI_Wait(&h->req[0], &s));
    MT_MPI(MPI_Test_cancelled(&s, &flag));
    if (flag) {
        h->cancelled++;
        return 0;
    }
    pool_accept(h, &s); /* matched before the cancel */
    return 1;
}

static int receiving(const struct thr *h)
{
    return s_pool ? !h->pool_stopped : h->left > 0;
}

static int send_turn(struct thr *h)
{
    if (h->sent >= s_n)
        return 0;
    int i = h->sent;
    struct plan p = plan_of(mt_rank, h->t, i);
    int tag = s_pool ? h->t * POOL_IDX + i : tag_of(p.dthread, h->t);
    int kind = p.kind;
    /* Blocking only towards a lower (rank, thread); a lower rank in a
     * pool. */
    if (s_pool ? p.dest >= mt_rank
               : id_of(p.dest, p.dthread) > id_of(mt_rank, h->t)) {
        if (kind == K_SEND)
            kind = K_ISEND;
        else if (kind == K_SSEND)
            kind = K_ISSEND;
    }
    uint32_t seed = seed_of(mt_rank, h->t, i);
    if (kind == K_SEND || kind == K_SSEND) {
        unsigned char *b = h->sbuf[SLOTS];
        mt_fill(b, p.len, seed);
        if (kind == K_SEND)
            MT_MPI(
                MPI_Send(b, (int)p.len, MPI_BYTE, p.dest, tag, MPI_COMM_WORLD));
        else
            MT_MPI(MPI_Ssend(b, (int)p.len, MPI_BYTE, p.dest, tag,
                             MPI_COMM_WORLD));
        h->sent++;
        atomic_fetch_add(&s_progress, 1);
        return 1;
    }
    int k = 0;
    while (k < SLOTS && h->req[MAXT + k] != MPI_REQUEST_NULL)
        k++;
    if (k == SLOTS)
        return 0; /* every slot in flight */
    MPI_Request *r = &h->req[MAXT + k];
    mt_fill(h->sbuf[k], p.len, seed);
    if (kind == K_ISEND)
        MT_MPI(MPI_Isend(h->sbuf[k], (int)p.len, MPI_BYTE, p.dest, tag,
                         MPI_COMM_WORLD, r));
    else if (kind == K_ISSEND)
        MT_MPI(MPI_Issend(h->sbuf[k], (int)p.len, MPI_BYTE, p.dest, tag,
                          MPI_COMM_WORLD, r));
    else {
        MT_MPI(MPI_Send_init(h->sbuf[k], (int)p.len, MPI_BYTE, p.dest, tag,
                             MPI_COMM_WORLD, r));
        MT_MPI(MPI_Start(r));
    }
    h->sidx[k] = i;
    h->spersist[k] = kind == K_PERSIST;
    h->sent++;
    h->sends_out++;
    atomic_fetch_add(&s_progress, 1);
    return 1;
}

/* Requests Testsome/Waitsome completed: receives are accepted, sends
 * retire (a persistent one is freed). */
static void retire(struct thr *h, int n, const int *idx, MPI_Status *st)
{
    for (int j = 0; j < n; j++) {
        int q = idx[j];
        if (q < MAXT) {
            h->rspec[q] = 0;
            if (s_pool)
                pool_accept(h, &st[j]);
            else
                accept_status(h, q, &st[j]);
            continue;
        }
        int k = q - MAXT;
        if (h->spersist[k]) /* inactive now: free it */
            MT_MPI(MPI_Request_free(&h->req[q]));
        MT_CHECK(h->req[q] == MPI_REQUEST_NULL, "send slot %d still set", k);
        h->sends_out--;
        atomic_fetch_add(&s_progress, 1);
    }
}

static void *thread_main(void *arg)
{
    struct thr *h = arg;
    int idle = 0, n = 0, idx[MAXT + SLOTS];
    MPI_Status st[MAXT + SLOTS];
    while (h->sent < s_n || h->sends_out > 0 || receiving(h)) {
        int progress =
            send_turn(h) + (s_pool ? pool_turn(h, 0) : recv_turn(h, 0));
        MT_MPI(MPI_Testsome(MAXT + SLOTS, h->req, &n, idx, st));
        if (n != MPI_UNDEFINED && n > 0) {
            retire(h, n, idx, st);
            progress += n;
        }
        if (progress) {
            idle = 0;
            continue;
        }
        if (++idle < IDLE_TURNS)
            continue;
        idle = 0;
        /* Nothing to do: wait in the library, with a receive posted for
         * every stream still owed (a sender blocked on us completes). */
        if (s_pool)
            pool_turn(h, 1);
        else
            recv_turn(h, 1);
        if (h->sends_out == 0 && !receiving(h))
            continue; /* sends left to start (their slot just freed) */
        h->waits++;
        MT_MPI(MPI_Waitsome(MAXT + SLOTS, h->req, &n, idx, st));
        MT_CHECK(n != MPI_UNDEFINED, "thread %d: Waitsome with nothing active",
                 h->t);
        retire(h, n, idx, st);
    }
    return NULL;
}

/* Ends the job if no thread of this rank progresses for STALL_S seconds. */
static void *monitor_main(void *arg)
{
    (void)arg;
    long last = -1;
    int quiet = 0;
    while (!atomic_load(&s_done)) {
        usleep(100 * 1000);
        long now = atomic_load(&s_progress);
        if (now != last) {
            last = now;
            quiet = 0;
            continue;
        }
        if (++quiet < STALL_S * 10)
            continue;
        for (int t = 0; t < s_threads; t++)
            fprintf(stderr,
                    "rank %d thread %d: sent %d of %d, %d in flight, %d "
                    "messages owed\n",
                    mt_rank, t, s_thr[t].sent, s_n, s_thr[t].sends_out,
                    s_thr[t].left);
        MT_FAIL("no progress for %d s", STALL_S);
    }
    return NULL;
}

static void setup(struct thr *h, int t)
{
    h->t = t;
    h->rng = s_seed ^ (uint64_t)(mt_rank * MAXT + t + 1) * 0x51ed270b27ull;
    int streams = mt_size * s_threads;
    h->list = calloc((size_t)streams, sizeof(*h->list));
    h->count = calloc((size_t)streams, sizeof(int));
    h->next = calloc((size_t)streams, sizeof(int));
    h->left_st = calloc(MAXT, sizeof(int));
    MT_CHECK(h->list && h->count && h->next && h->left_st, "out of memory");
    for (int r = 0; r < mt_size; r++)
        for (int st = 0; st < s_threads; st++) {
            int k = r * s_threads + st;
            h->list[k] = mt_malloc(sizeof(int) * (size_t)s_n);
            for (int i = 0; i < s_n; i++) {
                struct plan p = plan_of(r, st, i);
                if (p.dest == mt_rank && p.dthread == t)
                    h->list[k][h->count[k]++] = i;
            }
            h->left_st[st] += h->count[k];
            h->left += h->count[k];
        }
    for (int q = 0; q < MAXT + SLOTS; q++)
        h->req[q] = MPI_REQUEST_NULL;
    for (int st = 0; st < MAXT; st++)
        h->rbuf[st] = mt_malloc(s_max);
    for (int k = 0; k <= SLOTS; k++)
        h->sbuf[k] = mt_malloc(s_max);
}

static void teardown(struct thr *h)
{
    for (int k = 0; k < mt_size * s_threads; k++)
        free(h->list[k]);
    free(h->list);
    free(h->count);
    free(h->next);
    free(h->left_st);
    for (int st = 0; st < MAXT; st++)
        free(h->rbuf[st]);
    for (int k = 0; k <= SLOTS; k++)
        free(h->sbuf[k]);
}

static long arg_long(const char *opt, const char *v, long lo, long hi)
{
    char *end = NULL;
    long x = strtol(v, &end, 10);
    if (!*v || *end || x < lo || x > hi) {
        fprintf(stderr, "mt_mixed: %s takes %ld to %ld, not '%s'\n", opt, lo,
                hi, v);
        exit(2);
    }
    return x;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(argv[i], "--threads"))
            s_threads = (int)arg_long(argv[i], v, 1, MAXT);
        else if (!strcmp(argv[i], "--n"))
            s_n = (int)arg_long(argv[i], v, 0, 1000000);
        else if (!strcmp(argv[i], "--max"))
            s_max = (size_t)arg_long(argv[i], v, 0, 64 << 20);
        else if (!strcmp(argv[i], "--seed"))
            s_seed = (uint64_t)arg_long(argv[i], v, 0, 1L << 40);
        else if (!strcmp(argv[i], "--pool")) {
            s_pool = 1;
            continue;
        } else {
            fprintf(stderr,
                    "usage: mt_mixed [--threads 1-8] [--n N] [--max BYTES] "
                    "[--seed S] [--pool]\n");
            return 2;
        }
        i++;
    }
    int provided = -1;
    MT_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
    MT_EQ(provided, MPI_THREAD_MULTIPLE, "provided thread level");
    MT_CHECK(mt_size * s_threads >= 2, "needs two threads in all");
    if (s_pool) {
        MT_CHECK(s_threads <= POOL_MAXT && s_n <= POOL_IDX,
                 "--pool takes at most %d threads and %d messages each",
                 POOL_MAXT, POOL_IDX);
        size_t all = (size_t)mt_size * (size_t)s_threads * (size_t)s_n;
        s_pool_got = calloc(all ? all : 1, sizeof(*s_pool_got));
        MT_CHECK(s_pool_got, "out of memory");
        long mine = 0;
        for (int r = 0; r < mt_size; r++)
            for (int st = 0; st < s_threads; st++)
                for (int i = 0; i < s_n; i++)
                    mine += plan_of(r, st, i).dest == mt_rank;
        atomic_store(&s_pool_left, mine);
    }

    pthread_t th[MAXT], mon;
    for (int t = 0; t < s_threads; t++) {
        setup(&s_thr[t], t);
        s_thr[t].pool_stopped = s_pool && atomic_load(&s_pool_left) == 0;
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_CHECK(pthread_create(&mon, NULL, monitor_main, NULL) == 0,
             "pthread_create");
    for (int t = 0; t < s_threads; t++)
        MT_CHECK(pthread_create(&th[t], NULL, thread_main, &s_thr[t]) == 0,
                 "pthread_create");
    long recvd = 0, cancelled = 0, waits = 0;
    for (int t = 0; t < s_threads; t++) {
        pthread_join(th[t], NULL);
        recvd += s_thr[t].recvd;
        cancelled += s_thr[t].cancelled;
        waits += s_thr[t].waits;
    }
    atomic_store(&s_done, 1);
    pthread_join(mon, NULL);

    /* Every message sent was received exactly once, across the job. */
    long sums[2] = {(long)s_n * s_threads, recvd}, tot[2] = {0, 0};
    MT_MPI(MPI_Allreduce(sums, tot, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    MT_EQ(tot[1], tot[0], "messages received in the job");
    if (s_pool)
        MT_EQ(atomic_load(&s_pool_left), 0, "messages left in the pool");
    free(s_pool_got);
    for (int t = 0; t < s_threads; t++)
        teardown(&s_thr[t]);
    if (mt_rank == 0)
        printf("# %d threads%s, %d messages each, %ld received here, %ld "
               "receives cancelled, %ld waits\n",
               s_threads, s_pool ? " (pool)" : "", s_n, recvd, cancelled,
               waits);
    return mt_finish("mt_mixed");
}
