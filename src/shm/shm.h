/* SPDX-License-Identifier: MIT */
/* The job's shared segment: one anonymous memfd created by mpiexec and
 * inherited by every rank, so nothing ever appears in /dev/shm and a
 * SIGKILL of anyone leaks nothing. Rank 0 sizes it and writes the header;
 * every other rank checks the magic, the version and the layout before
 * trusting it.
 *
 * shm/ knows the segment, not what modules keep in it: the header (magic,
 * version, rank 0's layout, the attach and finalize barriers), each local
 * rank's pid, and a region allocator. Every module declares its own
 * regions - arrays of 'count' elements of 'elem' bytes per job, per local
 * rank or per ordered pair of local ranks - in its own header, next to the
 * structs that live there and their static_asserts:
 *   shm/cellq_inl.h    the cell queues and the cells
 *   chan/shm_layout.h  mailbox rings, their acks, doorbells
 *   xfer/shm_layout.h  probe records, rank 0's rule table, shared-copy
 *                      control blocks, double-buffer pads
 *   coll/shm.h         each rank's collective area
 * p2p declares them in one fixed order (fy_p2p_seg_layout; the layers
 * above it through a callback, fy_shm_declare_fn) and
 * fy_shm_layout_compute places them: the header's page, then the regions
 * by increasing alignment (declaration order among equals), each at a
 * multiple of its alignment, the total a page multiple.
 *
 * Shared control data is never trusted: every rank computes the layout
 * itself from the parameters, keeps it in private memory (fy_shm.lay, and
 * each module its own base pointers taken from it at start-up) and never
 * re-reads an offset or size from the segment; rank 0's copy in the header
 * is only compared with it at attach. Queue links are validated before
 * they are followed (cellq_inl.h), lengths before they steer a copy, and
 * peers' pids are copied once after the start-up barrier. A rank that
 * scribbles over the segment can make the job fail ("malformed ... from
 * rank N"), not make another rank write out of bounds.
 *
 * Version: nobody bumps a number. The header's version is a signature of
 * the header's own layout, and every region carries the signature of the
 * layout of its element (sizes and field offsets of its structs, and the
 * constants that shape it), both computed from the compiler's sizeof and
 * offsetof (fy_shm_sig). A rank built with a different layout of anything
 * in the segment is refused at attach, naming the region. */
#ifndef FY_SHM_H
#define FY_SHM_H

#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

#define FY_SHM_MAGIC 0x46657272795f5348ull /* "Ferry_SH" */

/* Every shared atomic is a plain lock-free word: a lock-based fallback
 * would put a process-private lock in shared memory. */
static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics are lock-free");
static_assert(ATOMIC_INT_LOCK_FREE == 2, "32-bit atomics are lock-free");

/* ---- layout signatures --------------------------------------------------- */

/* FNV-1a over 64-bit words: a signature of a list of sizes, offsets and
 * constants. Not a defence against a malicious peer (the layout checks
 * and bounds checks are), only against building one job from two
 * layouts. It sees layouts, not meanings: a change that keeps every size
 * and offset but reads a word differently must also change the words of
 * its region's signature (add the constant that changed, or a revision
 * number). */
static inline uint64_t fy_shm_sig(const uint64_t *w, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ w[i]) * 0x100000001b3ull;
    return h;
}
/* FY_SHM_SIG(sizeof(struct s), offsetof(struct s, f), ...): the signature
 * of these words, written next to the struct's static_asserts. */
#define FY_SHM_SIG(...)                                                        \
    fy_shm_sig((const uint64_t[]){__VA_ARGS__},                                \
               sizeof((const uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t))

/* ---- regions ------------------------------------------------------------- */

/* What a region's element count is multiplied by. */
enum fy_shm_per {
    FY_SHM_PER_JOB,  /* once */
    FY_SHM_PER_RANK, /* P times, indexed by local rank */
    FY_SHM_PER_PAIR, /* P x P times, [receiver][sender] or as the module says */
};

#define FY_SHM_NAME_LEN 16
#define FY_SHM_REGIONS_MAX 16
#define FY_SHM_PAGE 4096u
/* Largest region alignment (a 2 MiB huge page). */
#define FY_SHM_ALIGN_MAX (2u << 20)

/* One region as declared and as placed. Plain numbers, no pointers: rank
 * 0 publishes the whole table in the header and the others compare it
 * byte for byte with their own. */
struct fy_shm_region {
    char name[FY_SHM_NAME_LEN]; /* NUL-padded; unique in a layout */
    uint32_t per;               /* enum fy_shm_per */
    uint32_t align;             /* start: a power of two, >= a line */
    uint64_t elem;              /* bytes of one element */
    uint64_t count;             /* elements per job, rank or pair */
    uint64_t sig;               /* layout signature of the element */
    uint64_t off;               /* from the segment base (computed) */
    uint64_t len;               /* bytes of the region (computed) */
};
static_assert(sizeof(struct fy_shm_region) == 64, "a region is one line");
static_assert(offsetof(struct fy_shm_region, elem) == 24 &&
                  offsetof(struct fy_shm_region, len) == 56,
              "no padding: regions compare byte for byte");

/* Where everything is, computed by every rank for itself from the same
 * declarations. Unused region slots stay zero. */
struct fy_shm_layout {
    uint32_t nranks;
    uint32_t nregions;
    uint64_t total; /* bytes of the segment, a page multiple */
    struct fy_shm_region region[FY_SHM_REGIONS_MAX];
};
static_assert(offsetof(struct fy_shm_layout, region) == 16, "no padding");

/* Start a layout for nranks local ranks: empty but for the segment's own
 * region (each rank's pid). */
void fy_shm_layout_init(struct fy_shm_layout *lay, uint32_t nranks);

/* Declare a region at the end of the layout (among regions of one
 * alignment, the order of declarations is the order in the segment).
 * Returns its index, or -EINVAL (a name that is empty, too long or taken,
 * an alignment that is not a power of two from FY_CACHELINE to
 * FY_SHM_ALIGN_MAX, a bad 'per') or -E2BIG (no slot left), logged: both
 * are programming errors. */
int fy_shm_region_add(struct fy_shm_layout *lay, const char *name,
                      enum fy_shm_per per, uint64_t elem, uint64_t count,
                      uint32_t align, uint64_t sig);

/* Place the declared regions: offsets (by increasing alignment, then in
 * declaration order), lengths, total. Pure: the same declarations give the
 * same layout in every process. Returns 0 or -EOVERFLOW (logged) when the
 * sizes do not fit 64 bits. */
int fy_shm_layout_compute(struct fy_shm_layout *lay);

/* A module's declarations (fy_shm_region_add calls) for one layout.
 * Returns 0 or a negative errno. */
typedef int fy_shm_declare_fn(struct fy_shm_layout *lay);

/* The region called 'name' in lay, or NULL. */
const struct fy_shm_region *fy_shm_layout_find(const struct fy_shm_layout *lay,
                                               const char *name);

/* ---- the header ---------------------------------------------------------- */

/* The first page of the segment. magic, version and state keep their
 * offsets in every Ferry, so any two builds can tell each other apart. */
struct fy_shm_hdr {
    uint64_t magic;           /* rank 0, before state 2 */
    uint32_t version;         /* rank 0, before state 2: fy_shm_version() */
    _Atomic uint32_t state;   /* rank 0: 2 once the header is written (R1) */
    struct fy_shm_layout lay; /* rank 0's; the others compare, never use */
    /* Job-wide barriers of the segment's life; every local rank adds 1. */
    alignas(FY_CACHELINE) _Atomic uint32_t attached;  /* start-up */
    alignas(FY_CACHELINE) _Atomic uint32_t fin_count; /* finalize */
};
static_assert(offsetof(struct fy_shm_hdr, version) == 8 &&
                  offsetof(struct fy_shm_hdr, state) == 12 &&
                  offsetof(struct fy_shm_hdr, lay) == 16,
              "magic, version, state never move");
static_assert(offsetof(struct fy_shm_hdr, attached) % FY_CACHELINE == 0 &&
                  offsetof(struct fy_shm_hdr, fin_count) % FY_CACHELINE == 0,
              "each barrier counter has its own line");
static_assert(sizeof(struct fy_shm_hdr) <= FY_SHM_PAGE,
              "the header fits the page attach maps first");

/* The header's version: the signature of the header's layout. */
uint32_t fy_shm_version(void);

/* ---- this process's view ------------------------------------------------- */

/* Process-private view of the segment. */
struct fy_shm {
    uint8_t *base;
    uint64_t size;
    struct fy_shm_hdr *hdr;
    struct fy_shm_layout lay; /* private copy: the only one ever read */
    int32_t *pid_shared;      /* the "pids" region: [local rank] */
    int32_t *pid;             /* peers' pids, copied after the barrier */
    int fd;
};

extern struct fy_shm fy_shm;

/* Attach to (rank 0: create) the segment behind fd with layout 'want'
 * (computed by the caller; fy_shm keeps a private copy) and publish this
 * process's pid as local rank 'rank'. Another rank's layout must equal
 * rank 0's in every byte; the first difference is logged. Returns 0 or a
 * negative errno (-EPROTO: another Ferry build or other settings) after
 * logging why. Modules then take their regions' addresses
 * (fy_shm_region_ptr) and keep them privately. */
int fy_shm_attach(int fd, int rank, const struct fy_shm_layout *want);
void fy_shm_detach(void);

/* The start of region 'name' of the attached segment, and its length in
 * *len_out if len_out is not NULL; NULL if there is no such region
 * (logged). For start-up: callers keep the pointer. */
void *fy_shm_region_ptr(const char *name, uint64_t *len_out);

/* Wait until 'counter' reaches 'target', yielding: used only at start-up
 * and shut-down, where latency does not matter. */
void fy_shm_barrier_wait(_Atomic uint32_t *counter, uint32_t target);

/* Copy every rank's pid into private memory (after the attach barrier,
 * once each rank wrote its own). Returns 0 or -ENOMEM / -EPROTO (a pid
 * that cannot be one, logged). */
int fy_shm_pids_snapshot(void);

static inline void *fy_shm_ptr(uint64_t off)
{
    return fy_shm.base + off;
}
static inline uint64_t fy_shm_off(const void *p)
{
    return (uint64_t)((const uint8_t *)p - fy_shm.base);
}

#endif /* FY_SHM_H */
