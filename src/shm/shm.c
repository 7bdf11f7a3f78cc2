/* SPDX-License-Identifier: MIT */
/* Creating and attaching the job's shared segment (see shm.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm/shm.h"

struct fy_shm fy_shm = {.fd = -1};

static uint64_t align_line(uint64_t x)
{
    return FY_ALIGN_UP(x, (uint64_t)4096);
}

static void compute_layout(struct fy_shm_hdr *h, const struct fy_shm_params *p)
{
    uint64_t P = p->nranks;
    uint64_t off = align_line(sizeof(struct fy_shm_hdr));
    h->nranks = p->nranks;
    h->fbox_slots = p->fbox_slots;
    h->cell_size = p->cell_size;
    h->ncells = p->ncells;
    h->shmbuf_size = p->shmbuf_size;
    h->off_ranks = off;
    off = align_line(off + P * sizeof(struct fy_shm_rank));
    h->off_fbox = off;
    off = align_line(off + P * P * p->fbox_slots * sizeof(struct fy_fbox_slot));
    h->off_fack = off;
    off = align_line(off + P * P * sizeof(struct fy_fbox_ack));
    h->off_cells = off;
    off = align_line(off + P * p->ncells * (uint64_t)p->cell_size);
    h->off_shmbuf = off;
    off = align_line(
        off + P * P * (2 * sizeof(struct fy_shmbuf_ctl) + 2 * p->shmbuf_size));
    h->total = off;
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
    struct fy_shm_hdr probe = {0};
    compute_layout(&probe, want);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        FY_ERROR("FERRY_SHM_FD=%d is not an open file: %m", fd);
        return -EBADF;
    }
    if (rank == 0) {
        if (ftruncate(fd, (off_t)probe.total) != 0) {
            int err = errno;
            FY_ERROR("cannot size the shared segment to %llu bytes: %m",
                     (unsigned long long)probe.total);
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
        memcpy(h, &probe, offsetof(struct fy_shm_hdr, attached));
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
        if (h->magic != FY_SHM_MAGIC || h->version != FY_SHM_VERSION) {
            FY_ERROR("shared segment has magic %#llx version %u; expected "
                     "Ferry version %u (mixed Ferry installations?)",
                     (unsigned long long)h->magic, h->version, FY_SHM_VERSION);
            munmap(hp, (size_t)page);
            return -EPROTO;
        }
        if (h->nranks != want->nranks) {
            FY_ERROR("shared segment is for %u ranks, this rank was told %u",
                     h->nranks, want->nranks);
            munmap(hp, (size_t)page);
            return -EPROTO;
        }
        if (h->cell_size != want->cell_size || h->ncells != want->ncells ||
            h->shmbuf_size != want->shmbuf_size)
            FY_WARN(
                "FERRY_* layout settings differ from rank 0's; using rank 0's");
        /* Never trust a size we did not compute: recompute from the
         * parameters and compare with what the file really is. */
        struct fy_shm_params got = {h->nranks, h->fbox_slots, h->cell_size,
                                    h->ncells, h->shmbuf_size};
        struct fy_shm_hdr check = {0};
        compute_layout(&check, &got);
        fstat(fd, &st);
        if (check.total != h->total || check.off_cells != h->off_cells ||
            (uint64_t)st.st_size < check.total || h->cell_size < 1024 ||
            h->fbox_slots == 0 || h->fbox_slots > FY_FBOX_SLOTS) {
            FY_ERROR("shared segment header is inconsistent; refusing it");
            munmap(hp, (size_t)page);
            return -EPROTO;
        }
    }
    uint64_t total = h->total;
    munmap(hp, (size_t)page);
    void *base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        int err = errno;
        FY_ERROR("cannot map the %llu-byte shared segment: %m",
                 (unsigned long long)total);
        return -err;
    }
    fy_shm.base = base;
    fy_shm.size = total;
    fy_shm.hdr = base;
    fy_shm.ranks =
        (struct fy_shm_rank *)((uint8_t *)base + fy_shm.hdr->off_ranks);
    fy_shm.fd = fd;
    return 0;
}

void fy_shm_detach(void)
{
    if (fy_shm.base) {
        munmap(fy_shm.base, fy_shm.size);
        fy_shm.base = NULL;
    }
    if (fy_shm.fd >= 0) {
        close(fy_shm.fd);
        fy_shm.fd = -1;
    }
}
