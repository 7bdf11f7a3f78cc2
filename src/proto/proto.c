/* SPDX-License-Identifier: MIT */
/* The protocol table, its choice per message, and the counters (see
 * proto.h). */
#include <stdio.h>

#include "p2p/p2p_impl.h"
#include "proto/proto.h"

const struct fy_proto_ops fy_protos[FY_PROTO_COUNT] = {
    [FY_PROTO_SELF] = {.name = "self", .send = fy_proto_self_send},
    [FY_PROTO_EAGER] = {.name = "eager",
                        .send = fy_proto_eager_send,
                        .matched = fy_proto_eager_matched},
    [FY_PROTO_RNDV] = {.name = "rendezvous",
                       .send = fy_proto_rndv_send,
                       .matched = fy_rndv_on_rts},
};

enum fy_proto fy_proto_pick(int peer, uint64_t bytes)
{
    if (peer == fy_p2p.me)
        return FY_PROTO_SELF;
    return bytes <= fy_p2p.eager_max ? FY_PROTO_EAGER : FY_PROTO_RNDV;
}

struct fy_proto_stats fy_proto_stats;

static const char *const proto_names[FY_STAT_COUNT] = {
    [FY_STAT_EAGER_MAILBOX] = "eager_mailbox",
    [FY_STAT_EAGER_CELLS] = "eager_cells",
    [FY_STAT_RNDV_GET] = "rndv_get",
    [FY_STAT_RNDV_PUT] = "rndv_put",
    [FY_STAT_SELF] = "self",
};

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
            "ferry-stats rank=%d unexpected=%llu early_direct_recvs=%llu "
            "early_direct_bytes=%llu shared_copy_pieces=%llu\n",
            rank, (unsigned long long)s->unexpected,
            (unsigned long long)s->early_direct,
            (unsigned long long)s->early_direct_bytes,
            (unsigned long long)s->split);
}
