/* SPDX-License-Identifier: MIT */
/* Random packets from a peer. test_proto_malformed forges one packet per
 * known hazard; this one forges streams of random ones, to find the
 * hazards nobody listed. Each round forks two ranks running the
 * point-to-point core over shared memory. Rank 0 sends FUZZ_PKTS random
 * packets with the library's own channel sender - any of the 16 types a
 * mailbox slot can name, random tags and contexts, control fields drawn
 * from boundary values, lengths near the receiver's buffers, addresses
 * inside and outside its own buffer, random payloads - and then one
 * well-formed message with tag FUZZ_END. Rank 1 has receives posted
 * (FUZZ_END first, then any source and tag, 0 B to 256 KiB, reposted as
 * they complete; probes in between) and sends of its own started (eager,
 * synchronous and rendezvous, half of them cancelled, which rank 0 never
 * answers but forged control packets may name), and drives progress until
 * FUZZ_END arrives. By round, its protocol settings change: Push-Zero
 * with and without pushes, Push-Pull, no receiver-initiated writes.
 *
 * The library may accept a random packet (a well-formed eager message is
 * one), refuse it, or stall on a peer that stops following the protocol;
 * it may never crash. So each round must end with rank 1 either done
 * (status 0), ended by a "malformed ..." error (status 1) - or by "out of
 * memory" for a pushed message claiming more bytes than this machine can
 * keep (a sender may push as much as FERRY_PUSH_MAX says, and a receiver
 * cannot tell such a claim from a forged one) - or stalled
 * (status 2, after FUZZ_STALL_MS of waiting for FUZZ_END): never a
 * signal, another status, or another message. Under the ASan build an
 * out-of-bounds access is a signal (abort) as well. FERRY_FUZZ_ROUNDS
 * and FERRY_FUZZ_SEED reproduce a round: a failure prints both. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "boot/boot.h"
#include "harness.h"
#include "p2p/p2p_impl.h"
#include "pair.h"
#include "proto/proto.h"
#include "util/util.h"

enum {
    FUZZ_PKTS = 24,       /* random packets per round */
    FUZZ_END = 999,       /* the tag of the last, well-formed message */
    FUZZ_NRECV = 8,       /* receives rank 1 keeps posted */
    FUZZ_STALL_MS = 1500, /* rank 1 gives up waiting for FUZZ_END */
    FUZZ_BUF = 256 << 10, /* the largest receive, and rank 0's buffer */
};

/* A forged push may claim terabytes that the victim, as any receiver of
 * a pushed message, tries to keep: malloc must return NULL then (the
 * library's "out of memory" error), not abort the sanitizer builds. */
const char *__asan_default_options(void);
const char *__tsan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}
const char *__tsan_default_options(void)
{
    return "allocator_may_return_null=1";
}

static uint64_t rnd(uint64_t *s)
{
    /* xorshift64*: reproducible from the seed, no libc state. */
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* Rank 0's buffer: addresses in and around it go into the control
 * fields, so some forged rendezvous packets name bytes the receiver can
 * really read, and some name bytes nobody maps. */
static unsigned char *fuzz_buf;

/* A control field: what protocol code tends to get wrong. */
static uint64_t field(uint64_t *s)
{
    uint64_t base = (uint64_t)(uintptr_t)fuzz_buf;
    switch (rnd(s) % 13) {
    case 0:
        return 0;
    case 1:
        return 1 + rnd(s) % 8;
    case 2:
        return rnd(s) % 300; /* small lengths and offsets */
    case 3:
        return (uint64_t)1 << (rnd(s) % 64);
    case 4:
        return ((uint64_t)1 << (rnd(s) % 64)) - 1;
    case 5:
        return UINT64_MAX - rnd(s) % 4;
    case 6:
        return base + rnd(s) % FUZZ_BUF; /* inside rank 0's buffer */
    case 7:
        return base + FUZZ_BUF - rnd(s) % 64; /* at its end */
    case 8: {
        /* Sizes next to the receives' (16 B - 256 KiB). */
        static const uint64_t sz[] = {16, 256, 4096, 65536, 262144};
        return sz[rnd(s) % 5] + rnd(s) % 3 - 1;
    }
    case 9:
        /* A mechanism in the top byte, as offers carry it. */
        return (rnd(s) % 8) << 56 | rnd(s) % 65536;
    case 10:
        return 4096; /* page 1: never mapped */
    case 11:
        /* A cookie as the library makes them (generation << 32 | slot):
         * forged control packets may name the victim's own sends. */
        return (1 + rnd(s) % 2) << 32 | rnd(s) % 8;
    default:
        return rnd(s);
    }
}

static int32_t pick_tag(uint64_t *s)
{
    switch (rnd(s) % 6) {
    case 0:
        return -1 - (int32_t)(rnd(s) % 3); /* wildcard values on the wire */
    case 1:
        return INT32_MAX;
    case 2:
        return (int32_t)rnd(s) == FUZZ_END ? 0 : (int32_t)rnd(s);
    default:
        return (int32_t)(rnd(s) % 8);
    }
}

static void send_raw(uint32_t type, int32_t tag, uint32_t ctx,
                     const struct fy_ctl *ctl, const void *data, uint64_t len)
{
    /* Only the victim consumes what this rank sends (its cells come back
     * through the free queue): no progress here, so this rank never
     * reacts to the victim's answers. */
    /* FERRY_FUZZ_LOG=file: what was forged, for reproducing a round. */
    const char *log = getenv("FERRY_FUZZ_LOG");
    FILE *f = log ? fopen(log, "a") : NULL;
    if (f) {
        fprintf(f,
                "forged type %u tag %d ctx %u total %#llx addr %#llx cookie "
                "%#llx offset %#llx len %llu\n",
                type, tag, ctx, (unsigned long long)ctl->total,
                (unsigned long long)ctl->addr, (unsigned long long)ctl->cookie,
                (unsigned long long)ctl->offset, (unsigned long long)len);
        fclose(f);
    }
    while (!fy_chan_try_send(1, type, tag, ctx, ctl, data, len))
        sched_yield();
}

/* A message as the library's own senders shape it (eager, synchronous
 * eager, rendezvous, push with its pushed pieces), one field of the
 * first packet in 'maybe' (never if 0) replaced by a random one, so the
 * rounds get past the first packet into matching and the data paths. */
static void plausible(uint64_t *s, unsigned maybe)
{
    static const uint64_t sz[] = {0,      1,      16,    17,    255,
                                  256,    4096,   65535, 65536, 65537,
                                  100000, 262144, 262145};
    uint64_t base = (uint64_t)(uintptr_t)fuzz_buf;
    uint64_t total = sz[rnd(s) % (sizeof(sz) / sizeof(sz[0]))];
    int32_t tag = (int32_t)(rnd(s) % 8);
    uint64_t cookie = 1 + rnd(s) % 64;
    uint64_t cap = FY_MIN(fy_chan.cell_payload, 4096);
#define MAYBE(v) (maybe && rnd(s) % maybe == 0 ? field(s) : (v))
    switch (rnd(s) % 4) {
    case 0: { /* eager */
        uint64_t len = FY_MIN(total, cap);
        struct fy_ctl ctl = {.total = len};
        send_raw(FY_PKT_EAGER, tag, 0, &ctl, fuzz_buf, len);
        break;
    }
    case 1: { /* synchronous eager: control fields and the payload */
        uint64_t len = FY_MIN(total, cap);
        struct fy_ctl ctl = {.total = MAYBE(len), .cookie = MAYBE(cookie)};
        send_raw(FY_PKT_EAGER_SYNC, tag, 0, &ctl, fuzz_buf, len);
        break;
    }
    case 2: { /* rendezvous: the receiver reads our buffer */
        struct fy_ctl ctl = {.total = MAYBE(total),
                             .addr = MAYBE(base),
                             .cookie = MAYBE(cookie)};
        send_raw(FY_PKT_RTS, tag, 0, &ctl, NULL, 0);
        break;
    }
    default: { /* push: the first bytes, then pieces of the rest */
        uint64_t pushed = rnd(s) % 2 ? total : total / 2;
        uint64_t first = fy_push_first(pushed), piece = fy_push_piece(1);
        struct fy_ctl ctl = {
            .total = MAYBE(total),
            .addr = MAYBE(base),
            .cookie = MAYBE(cookie),
            .offset =
                MAYBE(pushed | (rnd(s) % 4 == 0 ? (uint64_t)1 << 63 : 0))};
        send_raw(FY_PKT_PUSH, tag, 0, &ctl, fuzz_buf, first);
        for (uint64_t off = first; off < pushed; off += piece) {
            /* The pieces as sent: a wrong one is a random packet. */
            struct fy_ctl d = {.total = total,
                               .addr = pushed,
                               .cookie = cookie,
                               .offset = off};
            send_raw(FY_PKT_PUSH_DATA, tag, 0, &d, fuzz_buf + off,
                     FY_MIN(piece, pushed - off));
        }
        break;
    }
    }
#undef MAYBE
}

/* Rank 0: the packets, then FUZZ_END; then wait to be killed. By the
 * seed, a round sends random packets only; or well-formed messages only,
 * then one random packet; or messages with a field in 16 of their first
 * packets random, and one random packet in 8. */
static _Noreturn void forger(uint64_t seed)
{
    uint64_t s = seed;
    int mode = (int)(seed % 3);
    for (int i = 0; i < FUZZ_PKTS; i++) {
        bool last = i == FUZZ_PKTS - 1;
        if ((mode == 1 && !last) || (mode == 2 && rnd(&s) % 8 != 0)) {
            plausible(&s, mode == 1 ? 0 : 16);
            continue;
        }
        uint32_t type = (uint32_t)(rnd(&s) % 16);
        if (rnd(&s) % 3 == 0) /* the message types, more often */
            type = (uint32_t)(FY_PKT_EAGER + rnd(&s) % 3);
        int32_t tag = pick_tag(&s);
        uint32_t ctx = rnd(&s) % 4 == 0 ? (uint32_t)(rnd(&s) & 0xfff) : 0;
        struct fy_ctl ctl = {
            .total = field(&s),
            .addr = field(&s),
            .cookie = field(&s),
            .offset = field(&s),
        };
        uint64_t len = 0;
        if (fy_pkt_has_payload(type)) {
            uint64_t cap = FY_MIN(fy_chan.cell_payload, 4096);
            len = rnd(&s) % 2 ? rnd(&s) % 65 : rnd(&s) % (cap + 1);
            for (uint64_t b = 0; b < len; b++)
                fuzz_buf[b] = (unsigned char)rnd(&s);
        }
        send_raw(type, tag, ctx, &ctl, fuzz_buf, len);
    }
    struct fy_ctl end = {0};
    send_raw(FY_PKT_EAGER, FUZZ_END, 0, &end, fuzz_buf, 8);
    for (;;)
        pause();
}

static struct fy_req *post(unsigned char *buf, int i, struct fy_comm *c)
{
    static const MPI_Count sizes[FUZZ_NRECV] = {0,     16,     256, 4096,
                                                65536, 262144, 17,  100000};
    struct fy_req *r = NULL;
    if (fy_p2p_irecv(buf, sizes[i], fy_dtype_get(MPI_BYTE), MPI_ANY_SOURCE,
                     MPI_ANY_TAG, c, 0, &r))
        _exit(5);
    return r;
}

static long ms_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* What the victim's library did in a round, copied into memory the
 * parent shares at every turn of its loop (a fatal error ends it inside
 * one): the rounds must reach the paths they are meant to try. */
enum { COV_EAGER, COV_RNDV, COV_PUSH, COV_PULL, COV_UNEXP, COV_OFFER, NCOV };
static const char *const cov_names[NCOV] = {
    "received an eager message",    "read a rendezvous message",
    "received pushed bytes",        "pulled the rest of a pushed message",
    "queued an unexpected message", "offered a buffer to be written",
};
static uint64_t *cov_shared; /* NCOV counters, MAP_SHARED */

static void cov_copy(void)
{
    const struct fy_proto_stats *st = &fy_proto_stats;
    cov_shared[COV_EAGER] = st->proto[FY_STAT_EAGER_MAILBOX].msgs +
                            st->proto[FY_STAT_EAGER_CELLS].msgs;
    cov_shared[COV_RNDV] = st->proto[FY_STAT_RNDV_GET].msgs;
    cov_shared[COV_PUSH] = st->proto[FY_STAT_PUSH].msgs;
    cov_shared[COV_PULL] = st->proto[FY_STAT_PULL].msgs;
    cov_shared[COV_UNEXP] = st->unexpected;
    cov_shared[COV_OFFER] = st->offers_sent;
}

/* Rank 1's own sends to rank 0, which never answers them: forged CTS,
 * FIN, SPLIT and CANCEL answers may name them. Eager, synchronous,
 * rendezvous; every other one asked to be cancelled. */
enum { FUZZ_NSEND = 6 };

static void start_sends(struct fy_comm *c, unsigned char *buf,
                        struct fy_req **reqs)
{
    static const struct {
        MPI_Count n;
        enum fy_send_mode mode;
    } sends[FUZZ_NSEND] = {
        {16, FY_SEND_STANDARD},    {100, FY_SEND_SYNC},
        {65536, FY_SEND_STANDARD}, {262144, FY_SEND_STANDARD},
        {4096, FY_SEND_SYNC},      {200000, FY_SEND_SYNC},
    };
    for (int i = 0; i < FUZZ_NSEND; i++) {
        if (fy_p2p_isend(buf, sends[i].n, fy_dtype_get(MPI_BYTE), 0, 50 + i, c,
                         0, sends[i].mode, &reqs[i]))
            _exit(5);
        if (i % 2)
            fy_p2p_cancel_send(reqs[i]);
    }
}

/* Rank 1: receives posted, sends started, progress until FUZZ_END. */
static int victim(struct fy_comm *c)
{
    unsigned char endbuf[8];
    struct fy_req *end = NULL;
    if (fy_p2p_irecv(endbuf, 8, fy_dtype_get(MPI_BYTE), 0, FUZZ_END, c, 0,
                     &end))
        return 5;
    /* A receive naming its source, large enough for the write protocol
     * to offer it to rank 0 (forged WDONE and WSPLIT may name it). */
    unsigned char *wbuf = malloc(FUZZ_BUF);
    struct fy_req *wreq = NULL;
    if (!wbuf ||
        fy_p2p_irecv(wbuf, FUZZ_BUF, fy_dtype_get(MPI_BYTE), 0, 3, c, 0, &wreq))
        return 5;
    unsigned char *bufs[FUZZ_NRECV];
    struct fy_req *reqs[FUZZ_NRECV];
    for (int i = 0; i < FUZZ_NRECV; i++) {
        if (!(bufs[i] = malloc(FUZZ_BUF)))
            return 5;
        reqs[i] = post(bufs[i], i, c);
    }
    unsigned char *sbuf = malloc(FUZZ_BUF);
    struct fy_req *sreqs[FUZZ_NSEND];
    if (!sbuf)
        return 5;
    memset(sbuf, 0xa5, FUZZ_BUF);
    start_sends(c, sbuf, sreqs);
    long deadline = ms_now() + FUZZ_STALL_MS;
    for (unsigned turn = 0;; turn++) {
        cov_copy();
        fy_progress();
        if (fy_req_test(end)) {
            cov_copy();
            return 0;
        }
        for (int i = 0; i < FUZZ_NRECV; i++) {
            if (fy_req_test(reqs[i])) {
                fy_req_free(reqs[i]);
                reqs[i] = post(bufs[i], i, c);
            }
        }
        if (turn % 16 == 0) {
            bool flag;
            int src, tag;
            MPI_Count n;
            fy_p2p_iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, 0, &flag, &src, &tag,
                          &n);
        }
        for (int i = 0; i < FUZZ_NSEND; i++)
            (void)fy_req_test(sreqs[i]);
        (void)fy_req_test(wreq);
        if (ms_now() > deadline)
            return 2;
    }
}

/* The victim's protocol settings, by round: its sends pushed or not,
 * Push-Pull, and without the write protocol. */
static void settings(uint64_t seed)
{
    static const char *const sets[][3] = {
        {"auto", "0", "1"},
        {"auto", "auto", "1"},
        {"pushpull", "auto", "1"},
        {"auto", "auto", "0"},
    };
    const char *const *v = sets[(seed / 3) % 4];
    setenv("FERRY_PROTO", v[0], 1);
    setenv("FERRY_PUSH_MAX", v[1], 1);
    setenv("FERRY_RECV_WRITE", v[2], 1);
}

/* A rank of a round: rank 0 forges (from a buffer twice the largest
 * receive: sizes just past it are forged too, and pushed from there),
 * rank 1 is the victim. Both write to the round's error pipe. */
static int rank_role(int rank, struct fy_test_pair *p, void *arg)
{
    if (rank == 1)
        return victim(&p->c);
    if (!(fuzz_buf = malloc(2 * FUZZ_BUF)))
        return 5;
    memset(fuzz_buf, 0x5a, 2 * FUZZ_BUF);
    forger(*(const uint64_t *)arg);
}

/* One round: 0 done, 1 malformed, 2 stalled, -1 a failure (reported). */
static int round_with(uint64_t seed)
{
    settings(seed);
    memset(cov_shared, 0, NCOV * sizeof(*cov_shared));
    pid_t pid[2];
    int errfd =
        fy_test_pair_spawn("ferry-test-fuzz", 3u, rank_role, &seed, pid);
    if (errfd < 0)
        return -1;
    int st, fst;
    waitpid(pid[1], &st, 0);
    /* The forger waits to be killed: if it ended first, the round tested
     * nothing (and the victim only waited for a dead peer). */
    bool forger_alive = waitpid(pid[0], &fst, WNOHANG) == 0;
    if (forger_alive) {
        kill(pid[0], SIGKILL);
        waitpid(pid[0], NULL, 0);
    }
    char out[4096];
    fy_test_read_all(errfd, out, sizeof(out));
    close(errfd);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 100)
        return 100;
    if (!forger_alive) {
        TAP_OK(0, "seed %#llx: the forging rank ended (%s %d): %s",
               (unsigned long long)seed, WIFEXITED(fst) ? "status" : "signal",
               WIFEXITED(fst) ? WEXITSTATUS(fst) : WTERMSIG(fst), out);
        return -1;
    }
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (code == 2)
        printf("# seed %#llx: stalled\n", (unsigned long long)seed);
    if (code == 0 || code == 2)
        return code;
    if (code == 1 && (strstr(out, "malformed") || strstr(out, "out of memory")))
        return 1;
    TAP_OK(0,
           "seed %#llx: rank 1 ended with %s %d, not done, stalled, "
           "\"malformed\" or \"out of memory\": %s",
           (unsigned long long)seed, WIFEXITED(st) ? "status" : "signal",
           WIFEXITED(st) ? code : WTERMSIG(st), out);
    return -1;
}

int main(void)
{
    const char *e = getenv("FERRY_FUZZ_ROUNDS");
    const char *es = getenv("FERRY_FUZZ_SEED");
    long rounds = e ? strtol(e, NULL, 10) : 1000;
    uint64_t seed0 = es ? strtoull(es, NULL, 0) : 0x9e3779b97f4a7c15ull;
    if (rounds < 1)
        rounds = 1;
    alarm((unsigned)(60 + rounds * 3));
    cov_shared = mmap(NULL, NCOV * sizeof(*cov_shared), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (cov_shared == MAP_FAILED)
        return 1;
    long n[3] = {0, 0, 0}, failed = 0, cov[NCOV] = {0};
    for (long i = 0; i < rounds; i++) {
        uint64_t seed = seed0 + (uint64_t)i;
        int rc = round_with(seed);
        if (rc == 100) {
            tap_skip("the point-to-point core did not start here");
            return tap_done();
        }
        if (rc < 0)
            failed++;
        else
            n[rc]++;
        for (int k = 0; k < NCOV; k++)
            cov[k] += cov_shared[k] != 0;
    }
    TAP_OK(failed == 0,
           "%ld rounds of %d random packets: %ld done, %ld refused as "
           "malformed (or out of memory), %ld stalled, %ld otherwise",
           rounds, FUZZ_PKTS, n[0], n[1], n[2], failed);
    /* Every path tried in some round (with the default 1000 rounds each
     * is reached in tens to hundreds). */
    for (int k = 0; k < NCOV; k++)
        TAP_OK(rounds < 200 || cov[k] > 0, "rounds in which rank 1 %s: %ld",
               cov_names[k], cov[k]);
    return tap_done();
}
