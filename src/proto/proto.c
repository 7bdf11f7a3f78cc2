/* SPDX-License-Identifier: MIT */
/* The protocol table, its choice per message, and the counters (see
 * proto.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "p2p/p2p_impl.h"
#include "proto/proto.h"
#include "util/copy.h"
#include "util/tuning.h"
#include "xfer/pin.h"

const struct fy_proto_ops fy_protos[FY_PROTO_COUNT] = {
    [FY_PROTO_SELF] = {.name = "self", .send = fy_proto_self_send},
    [FY_PROTO_EAGER] = {.name = "eager",
                        .send = fy_proto_eager_send,
                        .matched = fy_proto_eager_matched},
    [FY_PROTO_RNDV] = {.name = "rendezvous",
                       .send = fy_proto_rndv_send,
                       .matched = fy_rndv_on_rts},
    [FY_PROTO_PUSH] = {.name = "pushpull",
                       .send = fy_proto_push_send,
                       .matched = fy_push_matched},
    [FY_PROTO_WRITE] = {.name = "write", .send = fy_proto_write_send},
};

const char *const fy_proto_mode_names[4] = {
    [FY_MODE_AUTO] = "auto",
    [FY_MODE_PUSHPULL] = "pushpull",
    [FY_MODE_PUSHZERO] = "pushzero",
    [FY_MODE_PUSHALL] = "pushall",
};

int fy_proto_mode_parse(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, fy_proto_mode_names[i]))
            return i;
    return -1;
}

/* Whether our core may make both copies of a pair's round: the peer's
 * last large message to us, which we read from its buffer ourselves
 * because our receive came late (fy_peer.read_in), and this one, written
 * into its buffer. Both copies' sources and destinations must fit in half
 * of this core's cache - past that each evicts the other's lines, where
 * the rendezvous (the peer reads this one) gives each core one copy. A
 * late receiver that answers at once (seed 001's late ping-pong) wrote
 * its reply 4-14 % slower than the rendezvous at 512 KiB - 1 MiB with
 * 2 MiB of L2 (bench/README.md, "Copies on one core"). A read for a
 * receive posted in time does not count: both protocols then give each
 * core one copy, and counting it would lock a pair into reads. */
static bool copies_fit(const struct fy_req *r)
{
    const struct fy_p2p_state *s = &fy_p2p;
    uint64_t in = s->peers[r->wpeer].read_in;
    return !in || in + (uint64_t)r->bytes < s->copy_pair_max;
}

enum fy_proto fy_proto_pick(struct fy_req *r)
{
    const struct fy_p2p_state *s = &fy_p2p;
    if (r->wpeer == s->me)
        return FY_PROTO_SELF;
    /* An offer that matches wins at any size: the bytes go straight into
     * the receive buffer (write.c says when one is valid). Under auto:
     * - a blocking send, whose sender would wait anyway, uses it - but not
     *   to a receiver whose hint shows it in a blocking send to us with
     *   the receive for this message posted (an exchange): it reads the
     *   bytes itself, as we read its message - two writes crossing took
     *   1.3x the time of two reads (bench/README.md, "Exchanges"); the
     *   offer goes stale;
     * - a nonblocking one only when the receiver's hint shows it blocked
     *   in that very receive: it waits for nothing else, helps with the
     *   copy (split.c), and the bytes are there 15-35 % sooner than by the
     *   rendezvous from 64 KiB (bench/README.md, "The laboratory's
     *   interleaving") - unless we read its last message ourselves and
     *   the two copies would not fit our cache (copies_fit).
     * Otherwise MPI_Isend returns at once and leaves the copy to the
     * receiver (the rendezvous), not making it inside the call before the
     * sender's own computation. */
    if (FY_UNLIKELY(s->peers[r->wpeer].offer_head) && fy_write_offer_for(r)) {
        if (s->proto_mode != FY_MODE_AUTO)
            return FY_PROTO_WRITE;
        if (r->blocking ? !fy_p2p_receiver_present(r)
                        : fy_p2p_receiver_waiting(r) && copies_fit(r))
            return FY_PROTO_WRITE;
    }
    if ((uint64_t)r->bytes <= s->eager_max)
        return FY_PROTO_EAGER;
    if (s->proto_mode == FY_MODE_AUTO)
        return fy_push_auto(r) ? FY_PROTO_PUSH : FY_PROTO_RNDV;
    return fy_push_bytes((uint64_t)r->bytes) ? FY_PROTO_PUSH : FY_PROTO_RNDV;
}

struct fy_proto_stats fy_proto_stats;

static const char *const proto_names[FY_STAT_COUNT] = {
    [FY_STAT_EAGER_MAILBOX] = "eager_mailbox",
    [FY_STAT_EAGER_CELLS] = "eager_cells",
    [FY_STAT_RNDV_GET] = "rndv_get",
    [FY_STAT_RNDV_PUT] = "rndv_put",
    [FY_STAT_SELF] = "self",
    [FY_STAT_PUSH] = "pushed",
    [FY_STAT_PULL] = "pulled",
    [FY_STAT_WRITE] = "write",
};

static const char *const proto_descs[FY_STAT_COUNT] = {
    [FY_STAT_EAGER_MAILBOX] = "messages received whole through a mailbox",
    [FY_STAT_EAGER_CELLS] = "messages received whole through a queue cell",
    [FY_STAT_RNDV_GET] = "rendezvous messages read from the sender's buffer",
    [FY_STAT_RNDV_PUT] = "rendezvous messages streamed by the sender",
    [FY_STAT_SELF] = "messages a rank sent to itself",
    [FY_STAT_PUSH] = "Push-Pull/Push-All messages, by bytes pushed",
    [FY_STAT_PULL] = "Push-Pull messages, by bytes pulled after the push",
    [FY_STAT_WRITE] = "messages the sender wrote into an offered buffer",
};

#define FY_PVAR_MAX (2 * FY_STAT_COUNT + 2 * FY_XFER_NKINDS + 16)
static struct fy_pvar pvars[FY_PVAR_MAX];
static char pvar_names[FY_PVAR_MAX][48];
static char pvar_descs[FY_PVAR_MAX][96];
static int npvars;

static void pvar_add(const char *name, const char *desc, const uint64_t *v)
{
    snprintf(pvar_names[npvars], sizeof(pvar_names[0]), "ferry_%s", name);
    snprintf(pvar_descs[npvars], sizeof(pvar_descs[0]), "%s", desc);
    pvars[npvars] = (struct fy_pvar){pvar_names[npvars], pvar_descs[npvars], v};
    npvars++;
}

int fy_proto_pvars(const struct fy_pvar **out)
{
    struct fy_proto_stats *s = &fy_proto_stats;
    if (!npvars) {
        char n[48], d[96];
        for (int p = 0; p < FY_STAT_COUNT; p++) {
            snprintf(n, sizeof(n), "%s_msgs", proto_names[p]);
            snprintf(d, sizeof(d), "%s (count)", proto_descs[p]);
            pvar_add(n, d, &s->proto[p].msgs);
            snprintf(n, sizeof(n), "%s_bytes", proto_names[p]);
            snprintf(d, sizeof(d), "%s (bytes)", proto_descs[p]);
            pvar_add(n, d, &s->proto[p].bytes);
        }
        for (int k = 0; k < FY_XFER_NKINDS; k++) {
            snprintf(n, sizeof(n), "xfer_%s_msgs", fy_xfer_registry[k]->name);
            snprintf(d, sizeof(d), "rendezvous messages moved by %s",
                     fy_xfer_registry[k]->name);
            pvar_add(n, d, &s->xfer[k].msgs);
            snprintf(n, sizeof(n), "xfer_%s_bytes", fy_xfer_registry[k]->name);
            snprintf(d, sizeof(d), "rendezvous bytes moved by %s",
                     fy_xfer_registry[k]->name);
            pvar_add(n, d, &s->xfer[k].bytes);
        }
        pvar_add("unexpected", "messages that arrived before their receive",
                 &s->unexpected);
        pvar_add("write_available",
                 "receives naming one source that were posted before their "
                 "message arrived (could use the write protocol)",
                 &s->early_direct);
        pvar_add("write_available_bytes",
                 "bytes of the messages counted by ferry_write_available",
                 &s->early_direct_bytes);
        pvar_add("write_offers", "receive buffers offered to their sender",
                 &s->offers_sent);
        pvar_add("write_offers_used",
                 "offered receive buffers the sender wrote into",
                 &s->offers_used);
        pvar_add("write_sends",
                 "sends that wrote into a receiver's offered buffer",
                 &s->writes_done);
        pvar_add("shared_copy_pieces",
                 "rendezvous pieces copied by both ranks at once", &s->split);
        pvar_add("rma_helped_bytes",
                 "bytes of others' large puts/gets on this rank's window "
                 "(Win_create, dynamic) it copied",
                 &s->rma_helped_bytes);
        pvar_add("copy_loop_copies",
                 "copies at a slow distance (1-31 B modulo 4096) made by the "
                 "vector loop instead of memcpy",
                 &fy_copy_counts.loops);
        pvar_add("copy_loop_bytes", "bytes of those copies",
                 &fy_copy_counts.loop_bytes);
        pvar_add("copy_bounced_transfers",
                 "cma/procmem transfers at a slow distance bounced through "
                 "a scratch buffer",
                 &fy_copy_counts.bounces);
        pvar_add("copy_bounced_bytes", "bytes of those transfers",
                 &fy_copy_counts.bounce_bytes);
        pvar_add("doorbell_sleeps",
                 "times this rank slept waiting for a peer (ranks "
                 "outnumbering cores)",
                 &fy_chan.sleeps);
        pvar_add("doorbell_sleep_timeouts",
                 "of those, sleeps the 20 ms safety timeout ended (no peer "
                 "woke the rank)",
                 &fy_chan.sleep_timeouts);
        pvar_add("doorbell_lost_wakeups",
                 "of those, sleeps that found what they waited for already "
                 "there (a wake-up was lost: a bug)",
                 &fy_chan.lost_wakeups);
    }
    *out = pvars;
    return npvars;
}

const char *fy_proto_stat_name(enum fy_proto_stat p)
{
    return (unsigned)p < FY_STAT_COUNT ? proto_names[p] : "?";
}

void fy_proto_stats_print(int rank)
{
    const struct fy_proto_stats *s = &fy_proto_stats;
    for (int p = 0; p < FY_STAT_COUNT; p++)
        fprintf(stderr, "ferry-stats rank=%d proto=%s msgs=%llu bytes=%llu\n",
                rank, proto_names[p], (unsigned long long)s->proto[p].msgs,
                (unsigned long long)s->proto[p].bytes);
    for (int k = 0; k < FY_XFER_NKINDS; k++)
        if (s->xfer[k].msgs)
            fprintf(stderr,
                    "ferry-stats rank=%d xfer=%s msgs=%llu bytes=%llu\n", rank,
                    fy_xfer_registry[k]->name,
                    (unsigned long long)s->xfer[k].msgs,
                    (unsigned long long)s->xfer[k].bytes);
    fprintf(stderr,
            "ferry-stats rank=%d write=available msgs=%llu bytes=%llu\n", rank,
            (unsigned long long)s->early_direct,
            (unsigned long long)s->early_direct_bytes);
    fprintf(stderr,
            "ferry-stats rank=%d write=offers msgs=%llu used=%llu "
            "sends=%llu\n",
            rank, (unsigned long long)s->offers_sent,
            (unsigned long long)s->offers_used,
            (unsigned long long)s->writes_done);
    fprintf(stderr,
            "ferry-stats rank=%d matching=unexpected msgs=%llu "
            "shared_copy_pieces=%llu\n",
            rank, (unsigned long long)s->unexpected,
            (unsigned long long)s->split);
    fprintf(stderr,
            "ferry-stats rank=%d wait=doorbell sleeps=%llu timeouts=%llu "
            "lost_wakeups=%llu\n",
            rank, (unsigned long long)fy_chan.sleeps,
            (unsigned long long)fy_chan.sleep_timeouts,
            (unsigned long long)fy_chan.lost_wakeups);
    fprintf(stderr, "ferry-stats rank=%d copy=loop msgs=%llu bytes=%llu\n",
            rank, (unsigned long long)fy_copy_counts.loops,
            (unsigned long long)fy_copy_counts.loop_bytes);
    fprintf(stderr, "ferry-stats rank=%d copy=bounced msgs=%llu bytes=%llu\n",
            rank, (unsigned long long)fy_copy_counts.bounces,
            (unsigned long long)fy_copy_counts.bounce_bytes);
    /* Per channel, the messages received: the network channel counts its
     * own; shared memory has the rest (every message but those to self). */
    uint64_t msgs = 0, bytes = 0;
    for (int p = 0; p < fy_p2p.P; p++)
        if (p != fy_p2p.me && !fy_chan_remote(p))
            msgs += fy_p2p.peers[p].msgs_seen;
    for (int p = 0; p < FY_STAT_COUNT; p++)
        if (p != FY_STAT_SELF)
            bytes += s->proto[p].bytes;
    const struct fy_chan_counts *net = fy_chan.net ? fy_chan.net->counts : NULL;
    if (net)
        bytes -= FY_MIN(bytes, net->bytes);
    fprintf(stderr, "ferry-stats rank=%d chan=shm msgs=%llu bytes=%llu\n", rank,
            (unsigned long long)msgs, (unsigned long long)bytes);
    if (net)
        fprintf(stderr, "ferry-stats rank=%d chan=%s msgs=%llu bytes=%llu\n",
                rank, fy_chan.net->name, (unsigned long long)net->msgs,
                (unsigned long long)net->bytes);
    fy_pin_stats_print_all(rank); /* pin-down caches that were used */
}

/* ---- settings a running program may change (MPI_T cvar_write) ---------- */

bool fy_proto_setting_writable(int id)
{
    return id == FY_ENV_PROTO || id == FY_ENV_BTP || id == FY_ENV_RECV_WRITE ||
           id == FY_ENV_RECV_WRITE_MIN || id == FY_ENV_NET_PUSH_MAX;
}

/* The values are fy_p2p's; each is read where a send picks its protocol
 * or a receive decides to offer its buffer, so a change applies to the
 * sends and receives started after it, and a message in flight finishes
 * the way it started (its packets carry what the receiver needs). */
int fy_proto_setting_read(int id, long long *num, const char **str)
{
    struct fy_p2p_state *s = &fy_p2p;
    switch (id) {
    case FY_ENV_PROTO:
        *str = fy_proto_mode_names[s->proto_mode];
        return 0;
    case FY_ENV_BTP:
        *num = (long long)s->btp;
        return 0;
    case FY_ENV_RECV_WRITE:
        *num = s->recv_write;
        return 0;
    case FY_ENV_RECV_WRITE_MIN:
        *num = (long long)s->write_min;
        return 0;
    case FY_ENV_NET_PUSH_MAX:
        *num = (long long)s->net_push_max;
        return 0;
    default:
        return -EINVAL;
    }
}

int fy_proto_setting_write(int id, long long num, const char *str)
{
    struct fy_p2p_state *s = &fy_p2p;
    switch (id) {
    case FY_ENV_PROTO: {
        int m = str ? fy_proto_mode_parse(str) : -1;
        if (m < 0)
            return -EINVAL;
        s->proto_mode = m;
        return 0;
    }
    case FY_ENV_BTP:
        /* BTP(1) is part of BTP: never below it; the tuning file's bound. */
        if (num < 0 || (uint64_t)num > FY_TUNING_BTP_MAX ||
            (s->btp1 && (uint64_t)num < s->btp1))
            return -EINVAL;
        s->btp = (uint64_t)num;
        return 0;
    case FY_ENV_RECV_WRITE:
        if (num != 0 && num != 1)
            return -EINVAL;
        s->recv_write = num != 0;
        return 0;
    case FY_ENV_RECV_WRITE_MIN:
        if (num < 0)
            return -EINVAL;
        s->write_min = s->write_min_nb = (uint64_t)num;
        return 0;
    case FY_ENV_NET_PUSH_MAX:
        if (num < 0)
            return -EINVAL;
        s->net_push_max = (uint64_t)num;
        return 0;
    default:
        return -EINVAL;
    }
}
