/* SPDX-License-Identifier: MIT */
/* Message protocols: how a message travels, as a table indexed by enum
 * fy_proto, with per-rank counters (the seed-002 Table 2 figures). The
 * receiver counts each message once, when it is delivered, under the
 * protocol that carried it; rendezvous messages are also counted under the
 * mechanism that moved their bytes. FERRY_STATS=1 prints the counters at
 * MPI_Finalize. Not thread safe (one thread per process drives p2p). */
#ifndef FY_PROTO_H
#define FY_PROTO_H

#include <stdint.h>

#include "xfer/xfer.h"

enum fy_proto {
    FY_PROTO_EAGER_MAILBOX, /* whole message in the pair's mailbox ring */
    FY_PROTO_EAGER_CELLS,   /* whole message in a queue cell */
    FY_PROTO_RNDV_GET,      /* receiver reads the sender's buffer (one-sided) */
    FY_PROTO_RNDV_PUT,      /* sender streams after CTS (two-sided) */
    FY_PROTO_SELF,          /* a rank to itself */
    FY_PROTO_COUNT
};

struct fy_proto_counter {
    uint64_t msgs, bytes;
};

struct fy_proto_stats {
    struct fy_proto_counter proto[FY_PROTO_COUNT];
    struct fy_proto_counter xfer[FY_XFER_NKINDS]; /* rendezvous, by kind */
    uint64_t split;        /* rendezvous pieces shared with the sender */
    uint64_t unexpected;   /* messages that arrived before their receive */
    uint64_t early_direct; /* receives naming one source posted before
                            * their message: could have used the write
                            * protocol (seed 002's availability) */
};

extern struct fy_proto_stats fy_proto_stats;

/* The protocol's name, as FERRY_STATS prints it. */
const char *fy_proto_name(enum fy_proto p);

static inline void fy_proto_count(enum fy_proto p, uint64_t bytes)
{
    fy_proto_stats.proto[p].msgs++;
    fy_proto_stats.proto[p].bytes += bytes;
}

static inline void fy_proto_count_xfer(int kind, uint64_t bytes)
{
    fy_proto_stats.xfer[kind].msgs++;
    fy_proto_stats.xfer[kind].bytes += bytes;
}

/* Print one line per counter with traffic (and the others that are always
 * shown), "ferry-stats rank=<r> <group>=<name> msgs=<n> bytes=<n>", to
 * stderr. */
void fy_proto_stats_print(int rank);

#endif /* FY_PROTO_H */
