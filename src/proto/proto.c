/* SPDX-License-Identifier: MIT */
/* The protocol table's names and counters (see proto.h). */
#include <stdio.h>

#include "proto/proto.h"

struct fy_proto_stats fy_proto_stats;

static const char *const proto_names[FY_PROTO_COUNT] = {
    [FY_PROTO_EAGER_MAILBOX] = "eager_mailbox",
    [FY_PROTO_EAGER_CELLS] = "eager_cells",
    [FY_PROTO_RNDV_GET] = "rndv_get",
    [FY_PROTO_RNDV_PUT] = "rndv_put",
    [FY_PROTO_SELF] = "self",
};

const char *fy_proto_name(enum fy_proto p)
{
    return (unsigned)p < FY_PROTO_COUNT ? proto_names[p] : "?";
}

void fy_proto_stats_print(int rank)
{
    const struct fy_proto_stats *s = &fy_proto_stats;
    for (int p = 0; p < FY_PROTO_COUNT; p++)
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
            "shared_copy_pieces=%llu\n",
            rank, (unsigned long long)s->unexpected,
            (unsigned long long)s->early_direct, (unsigned long long)s->split);
}
