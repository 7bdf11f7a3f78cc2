/* SPDX-License-Identifier: MIT */
/* Creating and attaching the job's shared segment, and the region
 * allocator that lays it out (see shm.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm/shm.h"

struct fy_shm fy_shm = {.fd = -1};

/* The segment's own region: each local rank's pid, written by the rank at
 * attach, read once by everyone after the attach barrier. */
#define PIDS_REGION "pids"

uint32_t fy_shm_version(void)
{
    uint64_t h = FY_SHM_SIG(
        FY_SHM_MAGIC, sizeof(struct fy_shm_hdr),
        offsetof(struct fy_shm_hdr, lay), offsetof(struct fy_shm_hdr, attached),
        offsetof(struct fy_shm_hdr, fin_count), sizeof(struct fy_shm_layout),
        FY_SHM_REGIONS_MAX, sizeof(struct fy_shm_region), FY_SHM_NAME_LEN,
        offsetof(struct fy_shm_region, per),
        offsetof(struct fy_shm_region, align),
        offsetof(struct fy_shm_region, elem),
        offsetof(struct fy_shm_region, count),
        offsetof(struct fy_shm_region, sig),
        offsetof(struct fy_shm_region, off),
        offsetof(struct fy_shm_region, len), FY_SHM_PAGE);
    return (uint32_t)(h ^ h >> 32);
}

/* ---- the allocator ------------------------------------------------------- */

void fy_shm_layout_init(struct fy_shm_layout *lay, uint32_t nranks)
{
    memset(lay, 0, sizeof(*lay));
    lay->nranks = nranks;
    int rc =
        fy_shm_region_add(lay, PIDS_REGION, FY_SHM_PER_RANK, sizeof(int32_t), 1,
                          FY_CACHELINE, FY_SHM_SIG(sizeof(int32_t)));
    assert(rc == 0); /* the first region of an empty layout */
    (void)rc;
}

const struct fy_shm_region *fy_shm_layout_find(const struct fy_shm_layout *lay,
                                               const char *name)
{
    for (uint32_t i = 0; i < lay->nregions; i++)
        if (!strncmp(lay->region[i].name, name, FY_SHM_NAME_LEN))
            return &lay->region[i];
    return NULL;
}

int fy_shm_region_add(struct fy_shm_layout *lay, const char *name,
                      enum fy_shm_per per, uint64_t elem, uint64_t count,
                      uint32_t align, uint64_t sig)
{
    size_t nlen = strlen(name);
    const char *bad = NULL;
    if (nlen == 0 || nlen >= FY_SHM_NAME_LEN)
        bad = "its name must have 1 to 15 characters";
    else if (fy_shm_layout_find(lay, name))
        bad = "that name is taken";
    else if (align < FY_CACHELINE || align > FY_SHM_ALIGN_MAX ||
             (align & (align - 1)))
        bad = "its alignment must be a power of two from a cache line to "
              "2 MiB";
    else if (per != FY_SHM_PER_JOB && per != FY_SHM_PER_RANK &&
             per != FY_SHM_PER_PAIR)
        bad = "it is not per job, per rank or per pair";
    if (bad) {
        FY_ERROR("shared region '%s' (alignment %u) cannot be declared: %s",
                 name, align, bad);
        return -EINVAL;
    }
    if (lay->nregions == FY_SHM_REGIONS_MAX) {
        FY_ERROR("shared region '%s': all %d region slots are taken", name,
                 FY_SHM_REGIONS_MAX);
        return -E2BIG;
    }
    struct fy_shm_region *r = &lay->region[lay->nregions];
    memset(r, 0, sizeof(*r));
    memcpy(r->name, name, nlen);
    r->per = (uint32_t)per;
    r->align = align;
    r->elem = elem;
    r->count = count;
    r->sig = sig;
    return (int)lay->nregions++;
}

/* a * b into *out, or false when it does not fit 64 bits. */
static bool mul_ok(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

/* Place region r at the first multiple of its alignment from *off_io. */
static int place(struct fy_shm_region *r, uint64_t P, uint64_t *off_io)
{
    uint64_t times = r->per == FY_SHM_PER_JOB    ? 1
                     : r->per == FY_SHM_PER_RANK ? P
                                                 : P * P;
    uint64_t off = *off_io, len, start = 0, end = 0;
    bool fits = mul_ok(r->elem, r->count, &len) && mul_ok(len, times, &len) &&
                off <= UINT64_MAX - r->align - FY_SHM_PAGE;
    if (fits) {
        start = FY_ALIGN_UP(off, (uint64_t)r->align);
        fits = !__builtin_add_overflow(start, len, &end) &&
               end <= UINT64_MAX - FY_SHM_PAGE;
    }
    if (!fits) {
        FY_ERROR("shared region '%s' (%llu x %llu B for %llu ranks) does "
                 "not fit a segment",
                 r->name, (unsigned long long)r->count,
                 (unsigned long long)r->elem, (unsigned long long)P);
        return -EOVERFLOW;
    }
    r->off = start;
    r->len = len;
    *off_io = end;
    return 0;
}

int fy_shm_layout_compute(struct fy_shm_layout *lay)
{
    uint64_t off =
        FY_ALIGN_UP((uint64_t)sizeof(struct fy_shm_hdr), (uint64_t)FY_SHM_PAGE);
    /* By increasing alignment, in declaration order within one: the
     * line-aligned records pack together instead of each padding a page
     * between page-aligned arrays. */
    for (uint32_t align = FY_CACHELINE; align && align <= FY_SHM_ALIGN_MAX;
         align <<= 1) {
        for (uint32_t i = 0; i < lay->nregions; i++) {
            if (lay->region[i].align != align)
                continue;
            int rc = place(&lay->region[i], lay->nranks, &off);
            if (rc)
                return rc;
        }
    }
    lay->total = FY_ALIGN_UP(off, (uint64_t)FY_SHM_PAGE);
    return 0;
}

/* Log the first difference between rank 0's layout and ours. */
static void layout_diff(const struct fy_shm_layout *theirs,
                        const struct fy_shm_layout *mine)
{
    if (theirs->nranks != mine->nranks) {
        FY_ERROR("shared segment is laid out for %u ranks, this rank counts "
                 "%u on its node",
                 theirs->nranks, mine->nranks);
        return;
    }
    uint32_t n = FY_MAX(theirs->nregions, mine->nregions);
    for (uint32_t i = 0; i < n && i < FY_SHM_REGIONS_MAX; i++) {
        const struct fy_shm_region *t = &theirs->region[i];
        const struct fy_shm_region *m = &mine->region[i];
        if (!memcmp(t, m, sizeof(*t)))
            continue;
        if (strncmp(t->name, m->name, FY_SHM_NAME_LEN) || t->sig != m->sig ||
            t->per != m->per || t->align != m->align) {
            FY_ERROR("shared region %u is '%.*s' (layout %#llx) in the "
                     "segment, '%.*s' (layout %#llx) here: ranks of one job "
                     "from different Ferry builds?",
                     i, FY_SHM_NAME_LEN, t->name, (unsigned long long)t->sig,
                     FY_SHM_NAME_LEN, m->name, (unsigned long long)m->sig);
        } else {
            FY_ERROR("shared region '%s' is %llu x %llu B at %#llx in the "
                     "segment, %llu x %llu B at %#llx here (FERRY_* layout "
                     "settings must be the same on every rank)",
                     m->name, (unsigned long long)t->count,
                     (unsigned long long)t->elem, (unsigned long long)t->off,
                     (unsigned long long)m->count, (unsigned long long)m->elem,
                     (unsigned long long)m->off);
        }
        return;
    }
    if (theirs->nregions != mine->nregions)
        FY_ERROR("shared segment has %u regions, %u here: ranks of one job "
                 "from different Ferry builds?",
                 theirs->nregions, mine->nregions);
    else
        FY_ERROR("shared segment is %llu bytes for rank 0, %llu here",
                 (unsigned long long)theirs->total,
                 (unsigned long long)mine->total);
}

/* ---- attaching ----------------------------------------------------------- */

void fy_shm_barrier_wait(_Atomic uint32_t *counter, uint32_t target)
{
    /* A1: acquire pairs with the release increments of the other ranks:
     * what they initialised before arriving is visible after we leave. */
    for (unsigned i = 0;
         atomic_load_explicit(counter, memory_order_acquire) < target; i++) {
        if (i < 1000)
            fy_cpu_relax();
        else if (i < 100000)
            sched_yield();
        else
            usleep(100);
    }
}

int fy_shm_attach(int fd, int rank, const struct fy_shm_layout *want)
{
    const struct fy_shm_layout mine = *want;
    const struct fy_shm_region *pids = fy_shm_layout_find(&mine, PIDS_REGION);
    if (!pids || mine.total < pids->off + pids->len || rank < 0 ||
        (uint32_t)rank >= mine.nranks) {
        FY_ERROR("local rank %d cannot attach: the layout is not computed "
                 "or is for %u ranks",
                 rank, mine.nranks);
        return -EINVAL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        FY_ERROR("FERRY_SHM_FD=%d is not an open file: %m", fd);
        return -EBADF;
    }
    if (rank == 0) {
        if (ftruncate(fd, (off_t)mine.total) != 0) {
            int err = errno;
            FY_ERROR("cannot size the shared segment to %llu bytes: %m",
                     (unsigned long long)mine.total);
            return -err;
        }
    }
    long page = sysconf(_SC_PAGESIZE);
    void *hp =
        mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (hp == MAP_FAILED) {
        int err = errno;
        FY_ERROR("cannot map the shared segment header: %m");
        return -err;
    }
    struct fy_shm_hdr *h = hp;
    if (rank == 0) {
        h->lay = mine;
        h->magic = FY_SHM_MAGIC;
        h->version = fy_shm_version();
        /* R1: release pairs with A2 below: the layout is visible to any
         * rank that sees state 2. */
        atomic_store_explicit(&h->state, 2, memory_order_release);
    } else {
        for (unsigned i = 0;; i++) {
            /* A2: pairs with R1. The header page may still be a hole
             * (zero) until rank 0 sizes the file; mmap of a hole reads 0. */
            if (fstat(fd, &st) == 0 && (uint64_t)st.st_size >= (uint64_t)page &&
                atomic_load_explicit(&h->state, memory_order_acquire) == 2)
                break;
            if (i < 1000)
                fy_cpu_relax();
            else
                usleep(50);
        }
        struct fy_shm_hdr copy;
        memcpy(&copy, h, sizeof(copy)); /* read the shared header once */
        if (copy.magic != FY_SHM_MAGIC || copy.version != fy_shm_version()) {
            FY_ERROR("shared segment has magic %#llx version %#x; expected "
                     "Ferry version %#x (mixed Ferry installations?)",
                     (unsigned long long)copy.magic, copy.version,
                     fy_shm_version());
            munmap(hp, (size_t)page);
            return -EPROTO;
        }
        /* Every rank must have computed the same layout from the same
         * parameters (the launcher gives all ranks one environment). */
        if (memcmp(&copy.lay, &mine, sizeof(mine)) != 0) {
            layout_diff(&copy.lay, &mine);
            munmap(hp, (size_t)page);
            return -EPROTO;
        }
        if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < mine.total) {
            FY_ERROR("shared segment is %lld bytes, its layout needs %llu",
                     (long long)st.st_size, (unsigned long long)mine.total);
            munmap(hp, (size_t)page);
            return -EPROTO;
        }
    }
    munmap(hp, (size_t)page);
    void *base =
        mmap(NULL, mine.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        int err = errno;
        FY_ERROR("cannot map the %llu-byte shared segment: %m",
                 (unsigned long long)mine.total);
        return -err;
    }
    fy_shm.base = base;
    fy_shm.size = mine.total;
    fy_shm.hdr = base;
    fy_shm.lay = mine;
    fy_shm.pid_shared = (int32_t *)((uint8_t *)base + pids->off);
    fy_shm.pid_shared[rank] = getpid(); /* read after the attach barrier */
    fy_shm.fd = fd;
    return 0;
}

void *fy_shm_region_ptr(const char *name, uint64_t *len_out)
{
    const struct fy_shm_region *r = fy_shm_layout_find(&fy_shm.lay, name);
    if (!r || !fy_shm.base) {
        FY_ERROR("no shared region '%s' in this job's segment", name);
        return NULL;
    }
    if (len_out)
        *len_out = r->len;
    return fy_shm.base + r->off;
}

int fy_shm_pids_snapshot(void)
{
    uint32_t P = fy_shm.lay.nranks;
    int32_t *pid = malloc(P * sizeof(*pid));
    if (!pid)
        return -ENOMEM;
    for (uint32_t i = 0; i < P; i++) {
        pid[i] = fy_shm.pid_shared[i];
        if (pid[i] <= 0) {
            FY_ERROR("rank %u published pid %d in the shared segment", i,
                     pid[i]);
            free(pid);
            return -EPROTO;
        }
    }
    free(fy_shm.pid);
    fy_shm.pid = pid;
    return 0;
}

void fy_shm_detach(void)
{
    free(fy_shm.pid);
    fy_shm.pid = NULL;
    if (fy_shm.base) {
        munmap(fy_shm.base, fy_shm.size);
        fy_shm.base = NULL;
    }
    fy_shm.hdr = NULL;
    fy_shm.pid_shared = NULL;
    if (fy_shm.fd >= 0) {
        close(fy_shm.fd);
        fy_shm.fd = -1;
    }
}
