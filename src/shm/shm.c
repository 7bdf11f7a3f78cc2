/* SPDX-License-Identifier: MIT */
/* Creating and attaching the job's shared segment (see shm.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm/cellq_inl.h"
#include "shm/shm.h"

struct fy_shm fy_shm = {.fd = -1};

static uint64_t align_page(uint64_t x)
{
    return FY_ALIGN_UP(x, (uint64_t)4096);
}

void fy_shm_layout_compute(struct fy_shm_layout *l,
                           const struct fy_shm_params *p)
{
    uint64_t P = p->nranks;
    *l = (struct fy_shm_layout){.nranks = p->nranks,
                                .fbox_slots = p->fbox_slots,
                                .cell_size = p->cell_size,
                                .ncells = p->ncells,
                                .shmbuf_size = p->shmbuf_size,
                                .npads = p->npads};
    uint64_t off = align_page(sizeof(struct fy_shm_hdr));
    l->off_ranks = off;
    off = align_page(off + P * sizeof(struct fy_shm_rank));
    l->off_fbox = off;
    off = align_page(off + P * P * p->fbox_slots * sizeof(struct fy_fbox_slot));
    l->off_fack = off;
    off = align_page(off + P * P * sizeof(struct fy_fbox_ack));
    l->off_cells = off;
    l->cells_len = P * p->ncells * (uint64_t)p->cell_size;
    off = align_page(off + l->cells_len);
    l->off_pads = off;
    l->pad_len = 2 * sizeof(struct fy_shmbuf_ctl) + 2 * p->shmbuf_size;
    off = align_page(off + P * p->npads * l->pad_len);
    l->off_coll = off;
    off = align_page(off + P * FY_SHM_COLL_BYTES);
    l->total = off;
}

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

int fy_shm_attach(int fd, int rank, const struct fy_shm_params *want)
{
    struct fy_shm_layout mine;
    fy_shm_layout_compute(&mine, want);
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
        h->version = FY_SHM_VERSION;
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
        if (copy.magic != FY_SHM_MAGIC || copy.version != FY_SHM_VERSION) {
            FY_ERROR("shared segment has magic %#llx version %u; expected "
                     "Ferry version %u (mixed Ferry installations?)",
                     (unsigned long long)copy.magic, copy.version,
                     FY_SHM_VERSION);
            munmap(hp, (size_t)page);
            return -EPROTO;
        }
        /* Every rank must have computed the same layout from the same
         * parameters (the launcher gives all ranks one environment). */
        fstat(fd, &st);
        if (memcmp(&copy.lay, &mine, sizeof(mine)) != 0 ||
            (uint64_t)st.st_size < mine.total) {
            FY_ERROR("shared segment layout differs from this rank's (%u "
                     "ranks, %u cells of %u B, %u pads of %llu B here; "
                     "FERRY_* layout settings must be the same on every "
                     "rank)",
                     mine.nranks, mine.ncells, mine.cell_size, mine.npads,
                     (unsigned long long)mine.shmbuf_size);
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
    fy_shm.ranks = (struct fy_shm_rank *)((uint8_t *)base + mine.off_ranks);
    fy_shm.fd = fd;
    return 0;
}

void fy_cellq_bad_link(uint64_t off)
{
    fy_fatal(1,
             "malformed queue link %#llx in the shared segment (a rank "
             "wrote over shared control data); ending the job",
             (unsigned long long)off);
}

int fy_shm_pids_snapshot(void)
{
    uint32_t P = fy_shm.lay.nranks;
    int32_t *pid = malloc(P * sizeof(*pid));
    if (!pid)
        return -ENOMEM;
    for (uint32_t i = 0; i < P; i++) {
        pid[i] = fy_shm.ranks[i].pid;
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
    if (fy_shm.fd >= 0) {
        close(fy_shm.fd);
        fy_shm.fd = -1;
    }
}
