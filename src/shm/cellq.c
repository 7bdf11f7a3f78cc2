/* SPDX-License-Identifier: MIT */
/* The cell queues' regions in the segment and this process's view of
 * them; the queue itself is cellq_inl.h. */
#include <errno.h>

#include "shm/cellq_inl.h"

struct fy_cells fy_cells;

int fy_cellq_declare(struct fy_shm_layout *lay, uint32_t cell_size,
                     uint32_t ncells)
{
    if (cell_size <= FY_CELL_HDR || cell_size % FY_CACHELINE || !ncells) {
        FY_ERROR("%u cells of %u bytes cannot be queue cells", ncells,
                 cell_size);
        return -EINVAL;
    }
    int rc = fy_shm_region_add(lay, FY_CELLQ_REGION, FY_SHM_PER_RANK,
                               sizeof(struct fy_cellq_pair), 1, FY_CACHELINE,
                               FY_SHM_SIG(sizeof(struct fy_cellq_pair),
                                          offsetof(struct fy_cellq_pair, freeq),
                                          sizeof(struct fy_cellq),
                                          offsetof(struct fy_cellq, stub),
                                          sizeof(struct fy_qnode)));
    if (rc < 0)
        return rc;
    rc = fy_shm_region_add(
        lay, FY_CELLS_REGION, FY_SHM_PER_RANK, cell_size, ncells, FY_SHM_PAGE,
        FY_SHM_SIG(
            sizeof(struct fy_cell), offsetof(struct fy_cell, src),
            offsetof(struct fy_cell, type), offsetof(struct fy_cell, seq),
            offsetof(struct fy_cell, tag), offsetof(struct fy_cell, ctx),
            offsetof(struct fy_cell, len), offsetof(struct fy_cell, total),
            offsetof(struct fy_cell, addr), offsetof(struct fy_cell, cookie),
            offsetof(struct fy_cell, offset), FY_CELL_HDR));
    return rc < 0 ? rc : 0;
}

int fy_cellq_attach(void)
{
    const struct fy_shm_layout *lay = &fy_shm.lay;
    const struct fy_shm_region *q = fy_shm_layout_find(lay, FY_CELLQ_REGION);
    const struct fy_shm_region *c = fy_shm_layout_find(lay, FY_CELLS_REGION);
    if (!q || !c || !fy_shm.base) {
        FY_ERROR("the segment has no cell queues");
        return -EPROTO;
    }
    fy_cells = (struct fy_cells){
        .pairs = (struct fy_cellq_pair *)fy_shm_ptr(q->off),
        .pairs_off = q->off,
        .cells_off = c->off,
        .cells_len = c->len,
        .owner_len = c->elem * c->count,
        .cell_size = (uint32_t)c->elem,
        .ncells = (uint32_t)c->count,
        .nranks = lay->nranks,
    };
    return 0;
}

void fy_cellq_bad_link(uint64_t off)
{
    fy_fatal(1,
             "malformed queue link %#llx in the shared segment (a rank "
             "wrote over shared control data); ending the job",
             (unsigned long long)off);
}
