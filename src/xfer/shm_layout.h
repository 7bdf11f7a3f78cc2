/* SPDX-License-Identifier: MIT */
/* What the mechanisms keep in the node's segment: their regions, the
 * structs that live there and who writes each field, and this process's
 * private addresses of them (taken once at start-up, never re-read from
 * the segment).
 *
 * Regions (declared by fy_xfer_shm_declare, found by fy_xfer_shm_attach):
 * - "xfer.job": once per job, the probe barrier and rank 0's rule table
 *   (struct fy_xfer_job_shm; job.c).
 * - "xfer.rank": per local rank, what its probes found and where its net
 *   listener is (struct fy_xfer_rank_shm; job.c).
 * - "split": per local rank, the control block of the shared single copy
 *   towards that rank (struct fy_split_ctl; split.c).
 * - "pads": per local rank (the receiver), npads double-buffer pads of two
 *   control lines (struct fy_shmbuf_ctl) then two halves of half_size
 *   bytes (shmbuf.c); proto/rndv.c lends a pad to one sender at a time. */
#ifndef FY_XFER_SHM_LAYOUT_H
#define FY_XFER_SHM_LAYOUT_H

#include "shm/shm.h"
#include "xfer/xfer.h"

/* The probe barrier and the job's rule table. */
struct fy_xfer_job_shm {
    /* Every local rank adds 1 once its record is complete (R12). */
    alignas(FY_CACHELINE) _Atomic uint32_t probed;
    /* Rank 0 only, before the probe barrier; every rank checks and adopts
     * it after the barrier, so the whole job agrees. */
    alignas(FY_CACHELINE) uint32_t from; /* enum fy_xfer_from */
    uint32_t nrules;
    int32_t rule_kind[FY_XFER_RULES_MAX]; /* as struct fy_xfer_rule */
    uint64_t rule_min[FY_XFER_RULES_MAX];
    /* Rank 0 only, before the probe barrier: the largest message size at
     * which two memcpy's (a push through cells) cost less than one call of
     * the table's single-copy mechanism here (fy_xfer_push_crossover), 0 if
     * not measured. Every rank reads it once after the barrier. */
    uint64_t push_max;
};
static_assert(offsetof(struct fy_xfer_job_shm, from) == FY_CACHELINE,
              "the counter every rank writes has its own line");
static_assert(offsetof(struct fy_xfer_job_shm, rule_kind) == 72 &&
                  offsetof(struct fy_xfer_job_shm, rule_min) ==
                      72 + 4 * FY_XFER_RULES_MAX &&
                  offsetof(struct fy_xfer_job_shm, push_max) ==
                      72 + 12 * FY_XFER_RULES_MAX &&
                  sizeof(struct fy_xfer_job_shm) ==
                      FY_ALIGN_UP(80 + 12 * FY_XFER_RULES_MAX, FY_CACHELINE),
              "rule table layout");

/* One rank's mechanism record, written by that rank only: the probe word
 * before the attach barrier (one-sided probes read it after), the rest
 * before the probe barrier (read after it). */
struct fy_xfer_rank_shm {
    alignas(FY_CACHELINE) uint64_t probe_addr; /* a word others may read */
    uint64_t probe_value;                      /* what that word holds */
    uint64_t net_key;  /* a connecting peer must present it (net) */
    uint32_t net_port; /* loopback port listening for peers, 0 none */
    uint32_t ok;       /* bit 1 << enum fy_xfer_kind: mechanisms that worked
                        * for this rank (one-sided ones against its probe
                        * peer) */
};
static_assert(sizeof(struct fy_xfer_rank_shm) == FY_CACHELINE &&
                  offsetof(struct fy_xfer_rank_shm, net_key) == 16 &&
                  offsetof(struct fy_xfer_rank_shm, ok) == 28,
              "one line a rank");

/* A shared cma copy in progress towards this rank (invariants in
 * split.c). */
struct fy_split_ctl {
    /* gen << 32 | chunks taken from the back << 16 | next chunk from the
     * front: the owner opens a generation (R10) and claims from the front,
     * its helper from the back (C1; split.c). */
    alignas(FY_CACHELINE) _Atomic uint64_t claim;
    /* Chunks finished: the receiver resets it, every claimer adds. */
    alignas(FY_CACHELINE) _Atomic uint64_t done;
    _Atomic uint32_t err; /* errno of a failed chunk: any claimer */
};
/* The claim word's meaning, in the region's signature: 2 since it counts
 * from both ends (a rank of an older build is refused at attach). */
#define FY_SPLIT_CLAIM_REV 2u
static_assert(sizeof(struct fy_split_ctl) == 2 * FY_CACHELINE &&
                  offsetof(struct fy_split_ctl, done) == FY_CACHELINE &&
                  offsetof(struct fy_split_ctl, err) == FY_CACHELINE + 8,
              "claim and done on lines of their own");

/* Control line of one half of a double-buffer pad (invariants in
 * shmbuf.c): 'full' moves the half between its two owners, the other
 * fields are written by the sender while it owns the half. */
struct fy_shmbuf_ctl {
    /* 1: the sender filled it (sender stores 1, receiver stores 0). */
    alignas(FY_CACHELINE) _Atomic uint32_t full;
    uint32_t pad;
    uint64_t len;    /* bytes in this half; checked by the receiver */
    uint64_t cookie; /* the receive it is for; checked by the receiver */
};
static_assert(sizeof(struct fy_shmbuf_ctl) == FY_CACHELINE, "one line");
static_assert(offsetof(struct fy_shmbuf_ctl, len) == 8 &&
                  offsetof(struct fy_shmbuf_ctl, cookie) == 16,
              "len after flag");

/* Double-buffer pads each receiver owns (FERRY_SHMBUF_PADS bounds it). */
#define FY_SHMBUF_PADS_MAX 64

#define FY_XFER_JOB_REGION "xfer.job"
#define FY_XFER_RANK_REGION "xfer.rank"
#define FY_XFER_SPLIT_REGION "split"
#define FY_XFER_PADS_REGION "pads"

/* Declare the mechanisms' regions: npads pads of two halves of half_size
 * bytes (a multiple of FY_CACHELINE) per local rank. Returns 0 or the
 * allocator's negative errno. */
int fy_xfer_shm_declare(struct fy_shm_layout *lay, uint64_t half_size,
                        uint32_t npads);

/* This process's addresses of the regions (private memory). */
struct fy_xfer_shm {
    struct fy_xfer_job_shm *job;
    struct fy_xfer_rank_shm *rank; /* [local rank] */
    struct fy_split_ctl *split;    /* [local rank] */
    uint8_t *pads;                 /* [local rank][npads], pad_len each */
    uint64_t pad_len;
    uint64_t half_size;
    uint32_t npads;
};
extern struct fy_xfer_shm fy_xfer_shm;

/* Take the regions' addresses from the attached segment's layout and
 * publish this rank's probe word (world rank 'me', local rank 'local'):
 * call it before the attach barrier. Returns 0 or -EPROTO (a region
 * missing). */
int fy_xfer_shm_attach(int me, int local);

/* The shared-copy control block of local rank 'local'. */
static inline struct fy_split_ctl *fy_xfer_split_ctl(int local)
{
    return &fy_xfer_shm.split[local];
}

/* Pad 'pad' of local rank receiver's double buffers. */
static inline uint8_t *fy_xfer_shmbuf_pad(int receiver, uint32_t pad)
{
    const struct fy_xfer_shm *x = &fy_xfer_shm;
    return x->pads + ((uint64_t)receiver * x->npads + pad) * x->pad_len;
}

#endif /* FY_XFER_SHM_LAYOUT_H */
