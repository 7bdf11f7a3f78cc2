/* SPDX-License-Identifier: MIT */
/* Building blocks of the collectives: temporaries laid out like user
 * buffers, local typed copies and block addressing for the
 * gather/scatter/all-to-all shapes. */
#include "coll/coll_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

MPI_Aint fy_coll_tmp_span(MPI_Count count, const struct fy_dtype *dt)
{
    if (count <= 0)
        return 0;
    return (MPI_Aint)(count - 1) * dt->extent + (dt->true_ub - dt->true_lb);
}

void *fy_coll_tmp_alloc(MPI_Count count, const struct fy_dtype *dt,
                        void **base_out)
{
    MPI_Aint span = fy_coll_tmp_span(count, dt);
    char *base = malloc((size_t)FY_MAX(span, (MPI_Aint)1));
    if (!base)
        return NULL;
    *base_out = base;
    /* The first byte of data is at buf + true_lb. */
    return base - dt->true_lb;
}

int fy_coll_copy(const void *src, MPI_Count scount, struct fy_dtype *sdt,
                 void *dst, MPI_Count rcount, struct fy_dtype *rdt)
{
    MPI_Count sbytes = scount * sdt->size;
    MPI_Count rbytes = rcount * rdt->size;
    MPI_Count n = FY_MIN(sbytes, rbytes);
    int rc = sbytes > rbytes ? -EMSGSIZE : 0;
    if (n == 0)
        return rc;
    if (sdt->contig && rdt->contig) {
        memcpy(dst, src, (size_t)n);
    } else if (sdt->contig) {
        fy_dtype_unpack(src, n, dst, rcount, rdt);
    } else if (rdt->contig && sbytes <= rbytes) {
        fy_dtype_pack(src, scount, sdt, dst);
    } else {
        void *tmp = malloc((size_t)sbytes);
        if (!tmp)
            return -ENOMEM;
        fy_dtype_pack(src, scount, sdt, tmp);
        fy_dtype_unpack(tmp, n, dst, rcount, rdt);
        free(tmp);
    }
    return rc;
}

struct fy_coll_block fy_coll_layout_block(const struct fy_coll_layout *l, int i)
{
    struct fy_coll_block b;
    if (!l->counts.p) {
        b.count = l->count;
        b.dt = l->dt;
        b.ptr = fy_coll_at(l->buf, (MPI_Aint)i * l->count * l->dt->extent);
    } else if (!l->dts) {
        b.count = fy_vec_at(l->counts, i);
        b.dt = l->dt;
        b.ptr = fy_coll_at(l->buf, fy_vec_at(l->displs, i) * l->dt->extent);
    } else {
        b.count = fy_vec_at(l->counts, i);
        b.dt = l->dts[i];
        b.ptr = fy_coll_at(l->buf, fy_vec_at(l->displs, i));
    }
    return b;
}
