/* SPDX-License-Identifier: MIT */
/* Mixed point-to-point traffic, as an application rather than a ping-pong
 * would produce it: random sizes (0 B - 1 MiB, 70 % <= 256 B), destinations
 * and tags drawn from a fixed seed; blocking, nonblocking, synchronous and
 * persistent sends; ANY_SOURCE receives through Irecv+Testsome, Iprobe+Recv,
 * Improbe+Mrecv and (when idle) a blocking Recv or Waitsome, next to
 * specific-source receives; every byte checked.
 * Plain standard MPI, so it builds with any implementation's mpicc. */
#define _GNU_SOURCE /* sched_setaffinity for -b; strtok_r */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/resource.h>

#include <mpi.h>

#include "bench_common.h"

#define MIX_N_DEFAULT 500
#define MIX_MAX_DEFAULT ((size_t)1 << 20)
#define MIX_FLOOD_N_DEFAULT 20000
#define MIX_FLOOD_MAX_DEFAULT ((size_t)64 << 10)
#define MIX_NB_N_DEFAULT 1000
#define MIX_NB_MAX_DEFAULT ((size_t)16 << 10)
#define MIX_SEED_DEFAULT 1
/* Messages up to this size make up 70 % of the plan. */
#define MIX_SMALL 256
#define MIX_SMALL_PERCENT 70
/* Tags are drawn from [0, MIX_TAGS); every MPI allows up to 32767. */
#define MIX_TAGS 1000
/* Outstanding requests per rank: MIX_SLOTS sends plus MIX_SLOTS receives. */
#define MIX_SLOTS 32
/* Loop turns without progress before a rank blocks in MPI_Waitsome. */
#define MIX_IDLE_TURNS 64
/* A message carries its index and length in its first 8 bytes. */
#define MIX_HDR 8

/* --profile: where each rank's time goes, by what it was doing - the
 * benchmark's own work (filling and checking bytes) and each kind of MPI
 * call - so the rank on the critical path and what holds it show. Two
 * MPI_Wtime calls per timed call (a few percent more time with
 * --profile; none without). */
enum mix_pclass {
    PC_FILL,   /* filling a message's bytes */
    PC_CHECK,  /* checking a received message's bytes */
    PC_SEND,   /* MPI_Send */
    PC_SSEND,  /* MPI_Ssend of more than MIX_SMALL bytes */
    PC_SSMALL, /* MPI_Ssend of at most MIX_SMALL bytes: nothing to copy to
                * speak of, its time is the wait for the receiver to match */
    PC_POST,   /* MPI_Isend, Issend, Send_init + Start, Irecv */
    PC_TEST,   /* MPI_Testsome */
    PC_PROBE,  /* MPI_Iprobe, MPI_Improbe */
    PC_PRECV,  /* MPI_Recv after Iprobe, MPI_Mrecv */
    PC_BLOCK,  /* MPI_Recv(ANY_SOURCE), Waitsome, Waitall: nothing to do */
    PC_NCLASS
};
static const char *const mix_pclass_name[PC_NCLASS] = {
    "fill", "check", "send",  "ssend", "ssmall",
    "post", "test",  "probe", "precv", "block"};
static int mix_prof_on;
static double mix_prof_s[PC_NCLASS];
static long long mix_prof_n[PC_NCLASS];
/* And the main loop's turns that made no progress, whose calls are in the
 * classes above too: with a send due but every send slot taken (this
 * rank waits for receivers to take its messages), and with every send
 * started (it waits for messages owed to it); plus when, after the
 * timed region's start, it had started its last send. The rank whose
 * last send starts last, and that never stalls, is on the critical
 * path. */
static double mix_stall_full_s, mix_stall_done_s, mix_sent_s;

#define MIX_TIMED(cls, stmt)                                                   \
    do {                                                                       \
        if (!mix_prof_on) {                                                    \
            stmt;                                                              \
        } else {                                                               \
            double mix_t0_ = MPI_Wtime();                                      \
            stmt;                                                              \
            mix_prof_s[cls] += MPI_Wtime() - mix_t0_;                          \
            mix_prof_n[cls]++;                                                 \
        }                                                                      \
    } while (0)

enum mix_mode { MIX_RANDOM, MIX_FLOOD, MIX_NBSTRESS };

/* How a planned message is sent. Blocking kinds (Send, Ssend) are only used
 * towards a lower rank; towards a higher one they become Isend/Issend, so
 * no cycle of ranks can block in sends to each other. */
enum mix_kind { KIND_SEND, KIND_ISEND, KIND_SSEND, KIND_ISSEND, KIND_PERSIST };
#define MIX_NKINDS 5

/* How a receive is obtained: see mix_recv_turn(). */
enum mix_rmethod { RM_IRECV_ANY, RM_IRECV_SRC, RM_IPROBE, RM_IMPROBE };
#define MIX_NRMETHODS 4

struct mix_opts {
    enum mix_mode mode;
    int n; /* messages per sending rank */
    uint64_t seed;
    size_t max;     /* largest message */
    double timeout; /* seconds without progress before aborting */
    int bind;
};

/* One planned message: a pure function of (seed, source, index), so every
 * rank derives the same plan without communicating. */
struct mix_msg {
    int dest; /* -1: this source sends nothing at this index */
    int tag;
    int kind;
    size_t len;
};

static uint64_t mix_splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* 70 % uniform in [0, MIX_SMALL]; the rest log-uniform above it, at the
 * granularity of octaves: an octave (MIX_SMALL 2^k, MIX_SMALL 2^(k+1)] picked
 * uniformly, then a size uniformly within it (no libm needed). */
static size_t mix_size(uint64_t *st, size_t max)
{
    if (max <= MIX_SMALL || mix_splitmix(st) % 100 < MIX_SMALL_PERCENT) {
        size_t top = max < MIX_SMALL ? max : MIX_SMALL;
        return (size_t)(mix_splitmix(st) % (top + 1));
    }
    int octaves = 0;
    while (((size_t)MIX_SMALL << octaves) < max)
        octaves++;
    int k = (int)(mix_splitmix(st) % (uint64_t)octaves);
    size_t lo = (size_t)MIX_SMALL << k;
    size_t s = lo + 1 + (size_t)(mix_splitmix(st) % lo);
    return s > max ? max : s;
}

static struct mix_msg mix_plan(const struct mix_opts *o, int nranks, int src,
                               int index)
{
    uint64_t st =
        o->seed * 0x100000001b3ull ^ ((uint64_t)src << 40) ^ (uint64_t)index;
    mix_splitmix(&st);
    struct mix_msg m = {.dest = -1};
    if (o->mode == MIX_FLOOD) {
        if (src != 1 && src != 2)
            return m;
        m.dest = 0;
    } else {
        m.dest = (int)(mix_splitmix(&st) % (uint64_t)(nranks - 1));
        if (m.dest >= src)
            m.dest++;
    }
    m.tag = (int)(mix_splitmix(&st) % MIX_TAGS);
    m.kind = (int)(mix_splitmix(&st) % MIX_NKINDS);
    m.len = mix_size(&st, o->max);
    return m;
}

/* The message's bytes: 64-bit words derived from (src, index), then the
 * header (index, length) over the first MIX_HDR bytes when it fits. */
static uint64_t mix_word(int src, int index, size_t w)
{
    uint64_t base = ((uint64_t)(unsigned)src << 32 | (unsigned)index) *
                    0xd6e8feb86659fd93ull;
    return base ^ (w * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull);
}

/* The fill and check loops run over every byte of the job (a quarter
 * to a half of a rank's time) and their speed depends on where they land
 * in the binary: built against each library's mpi.h the code before them
 * differs, and mix_fill's loop crossing a 64-byte boundary (Ferry's
 * build, not Open MPI's) cost 20-25 % more time filling with 8 ranks,
 * the same with -falign-loops=64 for both (bench/README.md, "The fill
 * loop's alignment"). Starting both functions on a 64-byte boundary puts
 * their loops at the same place in every build. */
#define MIX_HOT __attribute__((aligned(64), noinline))

MIX_HOT static void mix_fill(unsigned char *buf, int src, int index, size_t len)
{
    size_t w = 0;
    for (; (w + 1) * 8 <= len; w++) {
        uint64_t v = mix_word(src, index, w);
        memcpy(buf + w * 8, &v, 8);
    }
    if (w * 8 < len) {
        uint64_t v = mix_word(src, index, w);
        memcpy(buf + w * 8, &v, len - w * 8);
    }
    if (len >= MIX_HDR) {
        uint32_t hdr[2] = {(uint32_t)index, (uint32_t)len};
        memcpy(buf, hdr, MIX_HDR);
    }
}

/* Offset of the first wrong byte, or len if all are right. */
MIX_HOT static size_t mix_check_bytes(const unsigned char *buf, int src,
                                      int index, size_t len)
{
    size_t w = len >= MIX_HDR ? 1 : 0;
    for (; (w + 1) * 8 <= len; w++) {
        uint64_t v = mix_word(src, index, w), got;
        memcpy(&got, buf + w * 8, 8);
        if (got != v)
            break;
    }
    if (w * 8 >= len)
        return len;
    uint64_t v = mix_word(src, index, w);
    const unsigned char *want = (const unsigned char *)&v;
    for (size_t k = w * 8; k < len && k < w * 8 + 8; k++)
        if (buf[k] != want[k - w * 8])
            return k;
    return len;
}

/* ---------------------------------------------------------------- state */

struct mix_state {
    const struct mix_opts *o;
    int rank, nranks;
    /* Send side: the next planned index, and the slots in flight. */
    int next_send;
    int sends_out;
    /* Receive side: per source, which planned messages are for us, which
     * have arrived, and what is still owed. */
    int **expect;        /* expect[src][k]: k-th index src sends to us */
    int *nexpect;        /* count of expect[src] */
    unsigned char **got; /* got[src][k]: expect[src][k] has arrived */
    int *first_open;     /* expect[src][first_open..] may still arrive */
    int *left;           /* messages from src not yet received */
    int total_left;
    /* Posted receives: ANY_SOURCE ones and per-source ones. Each posted
     * receive will complete (see mix_can_post()). */
    int posted_any;
    int *posted_src;
    /* Requests [0, MIX_SLOTS) are sends, [MIX_SLOTS, 2 MIX_SLOTS) receives;
     * slot_src is the source a receive was posted for (or ANY_SOURCE),
     * slot_index the planned index of a send. */
    MPI_Request req[2 * MIX_SLOTS];
    int slot_index[2 * MIX_SLOTS];
    int slot_persist[2 * MIX_SLOTS];
    unsigned char *buf[2 * MIX_SLOTS];
    unsigned char *probe_buf;
    unsigned char *block_buf;
    uint64_t rng; /* this rank's choices of receive method */
    long long msgs_recv, bytes_recv, msgs_sent, bytes_sent;
    long long counts[MIX_NRMETHODS];
    double last_progress;
};

static void mix_fail(struct mix_state *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
static void mix_fail(struct mix_state *s, const char *fmt, ...)
{
    static const char *mode[] = {"random", "flood", "nbstress"};
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    fprintf(stderr,
            "bench_mixed: rank %d of %d (mode %s, seed %llu, -n %d, -m "
            "%zu): %s\n",
            s->rank, s->nranks, mode[s->o->mode],
            (unsigned long long)s->o->seed, s->o->n, s->o->max, text);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

/* Validates a received message from src of len bytes with tag and records
 * it. Messages long enough carry their index; shorter ones are the earliest
 * outstanding message from src with that tag, length and contents (two such
 * with the same bytes are interchangeable). */
static void mix_accept(struct mix_state *s, const unsigned char *buf, int src,
                       int tag, int count)
{
    if (src < 0 || src >= s->nranks || src == s->rank)
        mix_fail(s, "message from impossible source %d", src);
    if (count < 0 || (size_t)count > s->o->max)
        mix_fail(s, "message from %d has impossible length %d", src, count);
    size_t len = (size_t)count;
    int k = -1;
    if (len >= MIX_HDR) {
        uint32_t hdr[2];
        memcpy(hdr, buf, MIX_HDR);
        int lo = 0, hi = s->nexpect[src] - 1;
        while (lo <= hi) { /* expect[src] is sorted by index */
            int mid = (lo + hi) / 2;
            if ((uint32_t)s->expect[src][mid] < hdr[0])
                lo = mid + 1;
            else if ((uint32_t)s->expect[src][mid] > hdr[0])
                hi = mid - 1;
            else {
                k = mid;
                break;
            }
        }
        if (k < 0 || hdr[1] != len)
            mix_fail(s,
                     "from %d: header says index %u length %u, received %zu "
                     "bytes with tag %d; no such message is planned for me",
                     src, hdr[0], hdr[1], len, tag);
        if (s->got[src][k])
            mix_fail(s, "from %d: message index %u received twice", src,
                     hdr[0]);
    } else {
        for (int j = s->first_open[src]; j < s->nexpect[src]; j++) {
            if (s->got[src][j])
                continue;
            struct mix_msg m =
                mix_plan(s->o, s->nranks, src, s->expect[src][j]);
            if (m.len == len && m.tag == tag &&
                mix_check_bytes(buf, src, s->expect[src][j], len) == len) {
                k = j;
                break;
            }
        }
        if (k < 0)
            mix_fail(s,
                     "from %d: %zu-byte message with tag %d matches no "
                     "outstanding planned message",
                     src, len, tag);
    }
    int index = s->expect[src][k];
    struct mix_msg m = mix_plan(s->o, s->nranks, src, index);
    if (m.tag != tag || m.len != len)
        mix_fail(s,
                 "from %d: message index %d has tag %d length %zu, planned "
                 "tag %d length %zu",
                 src, index, tag, len, m.tag, m.len);
    size_t bad;
    MIX_TIMED(PC_CHECK, bad = mix_check_bytes(buf, src, index, len));
    if (bad != len)
        mix_fail(s, "from %d: message index %d (%zu bytes): byte %zu wrong",
                 src, index, len, bad);
    s->got[src][k] = 1;
    while (s->first_open[src] < s->nexpect[src] &&
           s->got[src][s->first_open[src]])
        s->first_open[src]++;
    s->left[src]--;
    s->total_left--;
    s->msgs_recv++;
    s->bytes_recv += (long long)len;
}

/* Whether one more receive for src (or MPI_ANY_SOURCE) may be posted such
 * that every posted receive is still sure to complete. Worst case, every
 * posted ANY_SOURCE receive takes a message from the same source, so for
 * each source with receives posted for it: posted_src + posted_any <= left;
 * and overall: all posted <= total_left. A completion lowers both sides by
 * one, so this holds from posting to the end. (A probe only ever sees a
 * message no posted receive matched, so it never takes one from them.) */
static int mix_can_post(const struct mix_state *s, int src)
{
    int all = s->posted_any + 1;
    for (int r = 0; r < s->nranks; r++)
        all += s->posted_src[r];
    if (all > s->total_left)
        return 0;
    if (src != MPI_ANY_SOURCE)
        return s->posted_src[src] + 1 + s->posted_any <= s->left[src];
    for (int r = 0; r < s->nranks; r++)
        if (s->posted_src[r] > 0 &&
            s->posted_src[r] + s->posted_any + 1 > s->left[r])
            return 0;
    return 1;
}

static int mix_free_slot(const struct mix_state *s, int from)
{
    for (int i = from; i < from + MIX_SLOTS; i++)
        if (s->req[i] == MPI_REQUEST_NULL)
            return i;
    return -1;
}

/* Starts the next planned send of this rank. Returns 1 if one was started
 * (or sent), 0 if there is none or no free slot. */
static int mix_send_turn(struct mix_state *s)
{
    struct mix_msg m = {.dest = -1};
    while (s->next_send < s->o->n) {
        m = mix_plan(s->o, s->nranks, s->rank, s->next_send);
        if (m.dest >= 0)
            break;
        s->next_send++;
    }
    if (s->next_send >= s->o->n)
        return 0;
    int index = s->next_send;
    int kind = m.kind;
    if (kind == KIND_SEND && m.dest > s->rank)
        kind = KIND_ISEND;
    if (kind == KIND_SSEND && m.dest > s->rank)
        kind = KIND_ISSEND;
    if (kind == KIND_SEND || kind == KIND_SSEND) {
        MIX_TIMED(PC_FILL, mix_fill(s->block_buf, s->rank, index, m.len));
        if (kind == KIND_SEND)
            MIX_TIMED(PC_SEND, MPI_Send(s->block_buf, (int)m.len, MPI_BYTE,
                                        m.dest, m.tag, MPI_COMM_WORLD));
        else
            MIX_TIMED(m.len <= MIX_SMALL ? PC_SSMALL : PC_SSEND,
                      MPI_Ssend(s->block_buf, (int)m.len, MPI_BYTE, m.dest,
                                m.tag, MPI_COMM_WORLD));
    } else {
        int slot = mix_free_slot(s, 0);
        if (slot < 0)
            return 0;
        unsigned char *b = s->buf[slot];
        MIX_TIMED(PC_FILL, mix_fill(b, s->rank, index, m.len));
        MPI_Request *r = &s->req[slot];
        if (kind == KIND_ISEND)
            MIX_TIMED(PC_POST, MPI_Isend(b, (int)m.len, MPI_BYTE, m.dest, m.tag,
                                         MPI_COMM_WORLD, r));
        else if (kind == KIND_ISSEND)
            MIX_TIMED(PC_POST, MPI_Issend(b, (int)m.len, MPI_BYTE, m.dest,
                                          m.tag, MPI_COMM_WORLD, r));
        else
            MIX_TIMED(PC_POST, {
                MPI_Send_init(b, (int)m.len, MPI_BYTE, m.dest, m.tag,
                              MPI_COMM_WORLD, r);
                MPI_Start(r);
            });
        s->slot_index[slot] = index;
        s->slot_persist[slot] = kind == KIND_PERSIST;
        s->sends_out++;
    }
    s->next_send++;
    s->msgs_sent++;
    s->bytes_sent += (long long)m.len;
    return 1;
}

/* Retires the finished requests among the given indices of s->req. */
static void mix_retire(struct mix_state *s, const int *idx,
                       const MPI_Status *st, int n)
{
    for (int j = 0; j < n; j++) {
        int i = idx[j];
        if (i < MIX_SLOTS) {
            if (s->slot_persist[i])
                MPI_Request_free(&s->req[i]);
            s->req[i] = MPI_REQUEST_NULL;
            s->sends_out--;
            continue;
        }
        int count = 0;
        MPI_Get_count(&st[j], MPI_BYTE, &count);
        if (s->slot_index[i] == MPI_ANY_SOURCE)
            s->posted_any--;
        else {
            if (st[j].MPI_SOURCE != s->slot_index[i])
                mix_fail(s, "receive posted for source %d got source %d",
                         s->slot_index[i], st[j].MPI_SOURCE);
            s->posted_src[s->slot_index[i]]--;
        }
        mix_accept(s, s->buf[i], st[j].MPI_SOURCE, st[j].MPI_TAG, count);
    }
}

static int mix_test(struct mix_state *s, int from, int n)
{
    int idx[2 * MIX_SLOTS], done = 0;
    MPI_Status st[2 * MIX_SLOTS];
    MIX_TIMED(PC_TEST, MPI_Testsome(n, s->req + from, &done, idx, st));
    if (done == MPI_UNDEFINED || done == 0)
        return 0;
    for (int j = 0; j < done; j++)
        idx[j] += from;
    mix_retire(s, idx, st, done);
    return done;
}

/* A source with messages still owed, picked at random, or -1. */
static int mix_pick_src(struct mix_state *s)
{
    int start = (int)(mix_splitmix(&s->rng) % (uint64_t)s->nranks);
    for (int k = 0; k < s->nranks; k++) {
        int r = (start + k) % s->nranks;
        if (s->left[r] > 0 && mix_can_post(s, r))
            return r;
    }
    return -1;
}

static int mix_post(struct mix_state *s, int src)
{
    int slot = mix_free_slot(s, MIX_SLOTS);
    if (slot < 0 || !mix_can_post(s, src))
        return 0;
    MIX_TIMED(PC_POST, MPI_Irecv(s->buf[slot], (int)s->o->max, MPI_BYTE, src,
                                 MPI_ANY_TAG, MPI_COMM_WORLD, &s->req[slot]));
    s->slot_index[slot] = src;
    if (src == MPI_ANY_SOURCE)
        s->posted_any++;
    else
        s->posted_src[src]++;
    return 1;
}

/* One attempt at obtaining a message, by a method chosen at random. */
static int mix_recv_turn(struct mix_state *s)
{
    if (s->total_left == 0)
        return 0;
    int method = (int)(mix_splitmix(&s->rng) % MIX_NRMETHODS);
    int flag = 0, count = 0;
    MPI_Status st;
    s->counts[method]++;
    switch (method) {
    case RM_IRECV_ANY:
        return mix_post(s, MPI_ANY_SOURCE);
    case RM_IRECV_SRC: {
        int src = mix_pick_src(s);
        return src >= 0 ? mix_post(s, src) : 0;
    }
    case RM_IPROBE:
        MIX_TIMED(PC_PROBE, MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG,
                                       MPI_COMM_WORLD, &flag, &st));
        if (!flag)
            return 0;
        /* The earliest message from that source with that tag: the one
         * probed, by the non-overtaking rule. */
        MIX_TIMED(PC_PRECV,
                  MPI_Recv(s->probe_buf, (int)s->o->max, MPI_BYTE,
                           st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st));
        MPI_Get_count(&st, MPI_BYTE, &count);
        mix_accept(s, s->probe_buf, st.MPI_SOURCE, st.MPI_TAG, count);
        return 1;
    case RM_IMPROBE: {
        MPI_Message msg;
        MIX_TIMED(PC_PROBE, MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG,
                                        MPI_COMM_WORLD, &flag, &msg, &st));
        if (!flag)
            return 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (count < 0 || (size_t)count > s->o->max)
            mix_fail(s, "probed message from %d has impossible length %d",
                     st.MPI_SOURCE, count);
        MIX_TIMED(PC_PRECV,
                  MPI_Mrecv(s->probe_buf, count, MPI_BYTE, &msg, &st));
        MPI_Get_count(&st, MPI_BYTE, &count);
        mix_accept(s, s->probe_buf, st.MPI_SOURCE, st.MPI_TAG, count);
        return 1;
    }
    }
    return 0;
}

/* Blocks until a message arrives or a request completes, when that cannot
 * deadlock: this rank has started all its sends (so nobody waits for one it
 * has not begun), and an ANY_SOURCE receive is waited on (so any message
 * that arrives, including one from a rank blocked in MPI_Send towards us,
 * wakes us) or nothing more is owed to us. Alternates between a blocking
 * MPI_Recv(ANY_SOURCE) and MPI_Waitsome over everything in flight. */
static int mix_block(struct mix_state *s)
{
    if (s->next_send < s->o->n)
        return 0;
    if (s->total_left > 0 && (mix_splitmix(&s->rng) & 1) &&
        mix_can_post(s, MPI_ANY_SOURCE)) {
        MPI_Status st;
        int count = 0;
        MIX_TIMED(PC_BLOCK,
                  MPI_Recv(s->probe_buf, (int)s->o->max, MPI_BYTE,
                           MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        MPI_Get_count(&st, MPI_BYTE, &count);
        mix_accept(s, s->probe_buf, st.MPI_SOURCE, st.MPI_TAG, count);
        return 1;
    }
    if (s->total_left > 0 && s->posted_any == 0 && !mix_post(s, MPI_ANY_SOURCE))
        return 0;
    int idx[2 * MIX_SLOTS], done = 0;
    MPI_Status st[2 * MIX_SLOTS];
    MIX_TIMED(PC_BLOCK, MPI_Waitsome(2 * MIX_SLOTS, s->req, &done, idx, st));
    if (done == MPI_UNDEFINED)
        return 0;
    mix_retire(s, idx, st, done);
    return done;
}

static void mix_watchdog(struct mix_state *s, int progress)
{
    double now = MPI_Wtime();
    if (progress) {
        s->last_progress = now;
        return;
    }
    if (now - s->last_progress < s->o->timeout)
        return;
    char owed[256] = "";
    size_t used = 0;
    for (int r = 0; r < s->nranks && used < sizeof(owed) - 16; r++)
        if (s->left[r] > 0)
            used += (size_t)snprintf(owed + used, sizeof(owed) - used, " %d:%d",
                                     r, s->left[r]);
    mix_fail(s,
             "no progress for %.0f s: sent %d of %d, %d sends in flight, "
             "%d messages owed (source:count%s), %d ANY_SOURCE receives "
             "posted",
             s->o->timeout, s->next_send, s->o->n, s->sends_out, s->total_left,
             owed, s->posted_any);
}

static void mix_run(struct mix_state *s)
{
    int idle = 0;
    double t0 = mix_prof_on ? MPI_Wtime() : 0, turn = 0;
    while (s->next_send < s->o->n || s->sends_out > 0 || s->total_left > 0) {
        int due = s->next_send < s->o->n;
        if (mix_prof_on)
            turn = MPI_Wtime();
        int progress = mix_send_turn(s);
        progress += mix_test(s, 0, MIX_SLOTS);
        progress += mix_recv_turn(s);
        progress += mix_test(s, MIX_SLOTS, MIX_SLOTS);
        if (mix_prof_on) {
            double now = MPI_Wtime();
            if (!progress)
                *(due ? &mix_stall_full_s : &mix_stall_done_s) += now - turn;
            if (due && s->next_send >= s->o->n)
                mix_sent_s = now - t0;
        }
        if (progress) {
            idle = 0;
        } else if (++idle >= MIX_IDLE_TURNS) {
            progress = mix_block(s);
            idle = 0;
        }
        mix_watchdog(s, progress);
    }
}

/* ---------------------------------------------------------------- nbstress */

/* Nonblocking stress: n rounds; in each, every rank posts an Irecv from and
 * an Isend to every other rank (sizes from the plan), then MPI_Waitall. */
static void mix_nbstress(struct mix_state *s)
{
    int p = s->nranks;
    MPI_Request *req = malloc(sizeof(*req) * 2 * (size_t)p);
    MPI_Status *st = malloc(sizeof(*st) * 2 * (size_t)p);
    unsigned char **rb = malloc(sizeof(*rb) * (size_t)p);
    unsigned char **sb = malloc(sizeof(*sb) * (size_t)p);
    if (!req || !st || !rb || !sb)
        mix_fail(s, "out of memory");
    for (int r = 0; r < p; r++) {
        rb[r] = bench_alloc(s->o->max, 0);
        sb[r] = bench_alloc(s->o->max, 0);
        if (!rb[r] || !sb[r])
            mix_fail(s, "out of memory");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int round = 0; round < s->o->n; round++) {
        int nr = 0;
        for (int k = 1; k < p; k++) {
            int src = (s->rank - k + p) % p;
            MIX_TIMED(PC_POST,
                      MPI_Irecv(rb[src], (int)s->o->max, MPI_BYTE, src,
                                round % MIX_TAGS, MPI_COMM_WORLD, &req[nr++]));
        }
        for (int k = 1; k < p; k++) {
            int dst = (s->rank + k) % p;
            int index = round * p + dst;
            struct mix_msg m = mix_plan(s->o, p, s->rank, index);
            MIX_TIMED(PC_FILL, mix_fill(sb[dst], s->rank, index, m.len));
            MIX_TIMED(PC_POST,
                      MPI_Isend(sb[dst], (int)m.len, MPI_BYTE, dst,
                                round % MIX_TAGS, MPI_COMM_WORLD, &req[nr++]));
            s->msgs_sent++;
            s->bytes_sent += (long long)m.len;
        }
        MIX_TIMED(PC_BLOCK, MPI_Waitall(nr, req, st));
        for (int k = 1; k < p; k++) {
            int src = (s->rank - k + p) % p, count = 0;
            int index = round * p + s->rank;
            struct mix_msg m = mix_plan(s->o, p, src, index);
            MPI_Get_count(&st[k - 1], MPI_BYTE, &count);
            if ((size_t)count != m.len || st[k - 1].MPI_SOURCE != src)
                mix_fail(s, "round %d from %d: %d bytes, planned %zu", round,
                         src, count, m.len);
            size_t bad;
            MIX_TIMED(PC_CHECK,
                      bad = mix_check_bytes(rb[src], src, index, m.len));
            if (bad != m.len)
                mix_fail(s, "round %d from %d: byte %zu of %zu wrong", round,
                         src, bad, m.len);
            s->msgs_recv++;
            s->bytes_recv += count;
        }
    }
    for (int r = 0; r < p; r++) {
        free(rb[r]);
        free(sb[r]);
    }
    free(rb);
    free(sb);
    free(st);
    free(req);
}

/* ---------------------------------------------------------------- profile */

static double mix_tv(struct timeval a, struct timeval b)
{
    return (double)(b.tv_sec - a.tv_sec) +
           (double)(b.tv_usec - a.tv_usec) * 1e-6;
}

/* Rank 0 prints one '# profile' line per rank, in rank order: the timed
 * region's wall time, the process's CPU time, context switches and minor
 * page faults over it (getrusage), when the last send started and the main
 * loop's stalls, then seconds/calls per class. */
enum { MIX_PROF_HEAD = 9, MIX_PROF_LEN = MIX_PROF_HEAD + 2 * PC_NCLASS };

static void mix_profile_report(const struct mix_state *s, double wall,
                               const struct rusage *ru0)
{
    struct rusage ru1;
    getrusage(RUSAGE_SELF, &ru1);
    double mine[MIX_PROF_LEN] = {wall,
                                 mix_tv(ru0->ru_utime, ru1.ru_utime),
                                 mix_tv(ru0->ru_stime, ru1.ru_stime),
                                 (double)(ru1.ru_nvcsw - ru0->ru_nvcsw),
                                 (double)(ru1.ru_nivcsw - ru0->ru_nivcsw),
                                 (double)(ru1.ru_minflt - ru0->ru_minflt),
                                 mix_sent_s,
                                 mix_stall_full_s,
                                 mix_stall_done_s};
    for (int c = 0; c < PC_NCLASS; c++) {
        mine[MIX_PROF_HEAD + 2 * c] = mix_prof_s[c];
        mine[MIX_PROF_HEAD + 2 * c + 1] = (double)mix_prof_n[c];
    }
    double *all = NULL;
    if (s->rank == 0) {
        all = malloc(sizeof(*all) * MIX_PROF_LEN * (size_t)s->nranks);
        if (all == NULL)
            mix_fail((struct mix_state *)s, "out of memory");
    }
    MPI_Gather(mine, MIX_PROF_LEN, MPI_DOUBLE, all, MIX_PROF_LEN, MPI_DOUBLE, 0,
               MPI_COMM_WORLD);
    if (s->rank != 0)
        return;
    for (int r = 0; r < s->nranks; r++) {
        const double *v = all + (size_t)r * MIX_PROF_LEN;
        printf("# profile rank=%d wall_s=%.4f user_s=%.4f sys_s=%.4f "
               "vcsw=%.0f ivcsw=%.0f minflt=%.0f sent_s=%.4f stall_full_s=%.4f "
               "stall_done_s=%.4f",
               r, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]);
        for (int c = 0; c < PC_NCLASS; c++)
            printf(" %s_s=%.4f %s_n=%.0f", mix_pclass_name[c],
                   v[MIX_PROF_HEAD + 2 * c], mix_pclass_name[c],
                   v[MIX_PROF_HEAD + 2 * c + 1]);
        printf("\n");
    }
    fflush(stdout);
    free(all);
}

/* ---------------------------------------------------------------- setup */

static void mix_usage(FILE *f)
{
    fprintf(f,
            "usage: bench_mixed [--flood | --nbstress] [-n MSGS] [-s SEED]"
            " [-m MAX] [-T SECONDS] [-b] [--profile]\n"
            "  -n MSGS     messages each rank sends (default %d; --flood: %d"
            " from each\n"
            "              of ranks 1 and 2; --nbstress: rounds, default %d)\n"
            "  -s SEED     seed of the plan (default %d)\n"
            "  -m MAX      largest message, K/M suffixes (default 1M; "
            "--flood 64K;\n"
            "              --nbstress 16K); %d %% of messages are <= %d B\n"
            "  -T SECONDS  abort if a rank makes no progress this long "
            "(default 60)\n"
            "  -b          bind rank r to core r %% ncores\n"
            "  --flood     ranks 1 and 2 send all their messages to rank 0 "
            "(3+ ranks)\n"
            "  --nbstress  rounds of Isend/Irecv to and from every rank, "
            "then Waitall\n"
            "  --profile   per rank: CPU time, context switches, and the time "
            "spent\n"
            "              filling, checking and in each kind of MPI call "
            "('# profile'\n"
            "              lines before the result line); when its last send "
            "started\n"
            "              (sent_s) and its loop's turns without progress, "
            "with a send\n"
            "              due but no free send slot (stall_full_s) and with "
            "every send\n"
            "              started (stall_done_s)\n"
            "Output: '#' comment lines, then one line 'mixed time_s=T "
            "msgs=M bytes=B ...'\n"
            "with T the job's time between two barriers (max over ranks).\n",
            MIX_N_DEFAULT, MIX_FLOOD_N_DEFAULT, MIX_NB_N_DEFAULT,
            MIX_SEED_DEFAULT, MIX_SMALL_PERCENT, MIX_SMALL);
}

static int mix_parse(int argc, char **argv, int loud, struct mix_opts *o)
{
    int n = 0, max_set = 0;
    *o = (struct mix_opts){
        .mode = MIX_RANDOM, .seed = MIX_SEED_DEFAULT, .timeout = 60};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            if (loud)
                mix_usage(stdout);
            return 1;
        } else if (strcmp(a, "--flood") == 0) {
            o->mode = MIX_FLOOD;
        } else if (strcmp(a, "--nbstress") == 0) {
            o->mode = MIX_NBSTRESS;
        } else if (strcmp(a, "-b") == 0) {
            o->bind = 1;
        } else if (strcmp(a, "--profile") == 0) {
            mix_prof_on = 1;
        } else if (v == NULL) {
            bad = 1;
        } else if (strcmp(a, "-n") == 0) {
            bad = bench_parse_int(v, &n);
            i++;
        } else if (strcmp(a, "-s") == 0) {
            char *end = NULL;
            errno = 0;
            o->seed = strtoull(v, &end, 10);
            bad = errno != 0 || end == v || *end != '\0' || v[0] == '-';
            i++;
        } else if (strcmp(a, "-m") == 0) {
            bad = bench_parse_size(v, &o->max);
            max_set = 1;
            i++;
        } else if (strcmp(a, "-T") == 0) {
            bad = bench_parse_seconds(v, &o->timeout);
            i++;
        } else {
            bad = 1;
        }
        if (bad) {
            bench_complain(loud, "bench_mixed: bad option '%s'%s%s\n", a,
                           v ? " " : "", v ? v : "");
            if (loud)
                mix_usage(stderr);
            return -1;
        }
    }
    static const int n_def[] = {MIX_N_DEFAULT, MIX_FLOOD_N_DEFAULT,
                                MIX_NB_N_DEFAULT};
    static const size_t max_def[] = {MIX_MAX_DEFAULT, MIX_FLOOD_MAX_DEFAULT,
                                     MIX_NB_MAX_DEFAULT};
    o->n = n ? n : n_def[o->mode];
    if (!max_set)
        o->max = max_def[o->mode];
    return 0;
}

static void mix_setup(struct mix_state *s)
{
    int p = s->nranks;
    s->expect = calloc((size_t)p, sizeof(*s->expect));
    s->got = calloc((size_t)p, sizeof(*s->got));
    s->nexpect = calloc((size_t)p, sizeof(int));
    s->first_open = calloc((size_t)p, sizeof(int));
    s->left = calloc((size_t)p, sizeof(int));
    s->posted_src = calloc((size_t)p, sizeof(int));
    if (!s->expect || !s->got || !s->nexpect || !s->first_open || !s->left ||
        !s->posted_src)
        mix_fail(s, "out of memory");
    if (s->o->mode == MIX_NBSTRESS)
        return;
    for (int src = 0; src < p; src++) {
        for (int i = 0; i < s->o->n; i++)
            if (src != s->rank && mix_plan(s->o, p, src, i).dest == s->rank)
                s->nexpect[src]++;
        s->expect[src] = calloc((size_t)s->nexpect[src] + 1, sizeof(int));
        s->got[src] = calloc((size_t)s->nexpect[src] + 1, 1);
        if (!s->expect[src] || !s->got[src])
            mix_fail(s, "out of memory");
        int k = 0;
        for (int i = 0; i < s->o->n; i++)
            if (src != s->rank && mix_plan(s->o, p, src, i).dest == s->rank)
                s->expect[src][k++] = i;
        s->left[src] = s->nexpect[src];
        s->total_left += s->nexpect[src];
    }
    for (int i = 0; i < 2 * MIX_SLOTS; i++) {
        s->req[i] = MPI_REQUEST_NULL;
        s->buf[i] = bench_alloc(s->o->max, 0);
        if (s->buf[i] == NULL)
            mix_fail(s, "out of memory");
    }
    s->probe_buf = bench_alloc(s->o->max, 0);
    s->block_buf = bench_alloc(s->o->max, 0);
    if (!s->probe_buf || !s->block_buf)
        mix_fail(s, "out of memory");
}

static void mix_teardown(struct mix_state *s)
{
    for (int r = 0; r < s->nranks; r++) {
        free(s->expect[r]);
        free(s->got[r]);
    }
    if (s->o->mode != MIX_NBSTRESS)
        for (int i = 0; i < 2 * MIX_SLOTS; i++)
            free(s->buf[i]);
    free(s->probe_buf);
    free(s->block_buf);
    free(s->expect);
    free(s->got);
    free(s->nexpect);
    free(s->first_open);
    free(s->left);
    free(s->posted_src);
}

int main(int argc, char **argv)
{
    int rank = 0, nranks = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    struct mix_opts o;
    int rc = mix_parse(argc, argv, rank == 0, &o);
    if (rc != 0) {
        MPI_Finalize();
        return rc < 0 ? 1 : 0;
    }
    if (nranks < 2 || (o.mode == MIX_FLOOD && nranks < 3)) {
        if (rank == 0)
            fprintf(stderr, "bench_mixed: needs at least %d ranks\n",
                    o.mode == MIX_FLOOD ? 3 : 2);
        MPI_Finalize();
        return 1;
    }
    if (o.bind && bench_bind_self(rank) != 0 && rank == 0)
        fprintf(stderr, "bench_mixed: warning: -b: binding failed\n");

    struct mix_state s = {.o = &o, .rank = rank, .nranks = nranks};
    s.rng = o.seed ^ (0x51ed270b27ull * (uint64_t)(rank + 1));
    mix_setup(&s);

    MPI_Barrier(MPI_COMM_WORLD);
    struct rusage ru0;
    getrusage(RUSAGE_SELF, &ru0);
    double t0 = MPI_Wtime();
    s.last_progress = t0;
    if (o.mode == MIX_NBSTRESS)
        mix_nbstress(&s);
    else
        mix_run(&s);
    MPI_Barrier(MPI_COMM_WORLD);
    double dt = MPI_Wtime() - t0;
    if (mix_prof_on)
        mix_profile_report(&s, dt, &ru0);

    double tmax = 0;
    long long mine[2] = {s.msgs_recv, s.bytes_recv}, all[2] = {0, 0};
    MPI_Reduce(&dt, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(mine, all, 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        static const char *mode[] = {"random", "flood", "nbstress"};
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int major = 0, minor = 0;
        MPI_Get_version(&major, &minor);
        bench_lib_version(lib);
        printf("# bench_mixed mode=%s ranks=%d n=%d seed=%llu max=%zu "
               "bind=%d mpi=%d.%d lib=%.60s\n",
               mode[o.mode], nranks, o.n, (unsigned long long)o.seed, o.max,
               o.bind, major, minor, lib);
        printf("mixed time_s=%.6f msgs=%lld bytes=%lld msgs_per_s=%.0f "
               "MB_per_s=%.1f\n",
               tmax, all[0], all[1], tmax > 0 ? (double)all[0] / tmax : 0,
               tmax > 0 ? (double)all[1] / tmax / 1e6 : 0);
        fflush(stdout);
    }
    mix_teardown(&s);
    MPI_Finalize();
    return 0;
}
