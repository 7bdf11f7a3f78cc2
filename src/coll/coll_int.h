/* SPDX-License-Identifier: MIT */
/* Helpers shared by the collective algorithms in src/coll only. */
#ifndef FY_COLL_INT_H
#define FY_COLL_INT_H

#include "coll/coll.h"
#include "p2p/p2p.h"
#include "util/util.h"

/* Tag of step 'step' (0..255) of the collective numbered 'seq' on its
 * communicator. Sequence numbers wrap after 2^22 collectives; by then the
 * earlier ones are long complete (each is blocking), and matching is
 * non-overtaking anyway: the number only makes a mismatch loud instead of
 * silent should an algorithm ever get its pairing wrong. */
#define FY_COLL_TAG(seq, step)                                                \
    ((int)((((uint32_t)(seq)&0x3fffffu) << 8) | ((uint32_t)(step)&0xffu)))

/* Start a collective on c: its sequence number. Every member calls the
 * collectives of c in the same order, so the numbers agree. */
static inline uint32_t fy_coll_begin(struct fy_comm *c)
{
    return c->coll_seq++;
}

/* Keep the first error seen. */
static inline int fy_coll_keep(int err, int rc) { return err ? err : rc; }

static inline char *fy_coll_at(const void *buf, MPI_Aint off)
{
    return (char *)buf + off;
}

/* Blocking point-to-point on the collective context. Return 0 or a
 * negative errno (-EMSGSIZE if the incoming message was longer). */
int fy_coll_send(const void *buf, MPI_Count count, struct fy_dtype *dt,
                 int dest, int tag, struct fy_comm *c);
int fy_coll_recv(void *buf, MPI_Count count, struct fy_dtype *dt, int src,
                 int tag, struct fy_comm *c);
/* Send to dest and receive from src concurrently (either may be
 * MPI_PROC_NULL), so rings and exchanges cannot deadlock whatever the
 * protocol the p2p layer picks. */
int fy_coll_sendrecv(const void *sbuf, MPI_Count scount, struct fy_dtype *sdt,
                     int dest, void *rbuf, MPI_Count rcount,
                     struct fy_dtype *rdt, int src, int tag,
                     struct fy_comm *c);
/* Wait for and free n requests (NULL entries are skipped); first error. */
int fy_coll_waitall(struct fy_req **reqs, int n);

/* A buffer for count elements of dt laid out as in a user buffer (holes
 * included): returns the address to use as the buffer and the allocation
 * to free in *base_out, or NULL. */
void *fy_coll_tmp_alloc(MPI_Count count, const struct fy_dtype *dt,
                        void **base_out);

/* Where block i of a gather/scatter/all-to-all buffer lives. One struct
 * covers the three MPI shapes: uniform (counts == NULL: 'count' elements
 * at i * count extents), v (counts[i] at displs[i] extents) and w
 * (counts[i] of dts[i] at displs[i] bytes). */
struct fy_coll_layout {
    const void *buf;
    MPI_Count count;
    const int *counts;
    const int *displs;
    struct fy_dtype *dt;
    struct fy_dtype *const *dts; /* w shape only */
};

struct fy_coll_block {
    char *ptr;
    MPI_Count count;
    struct fy_dtype *dt;
};

struct fy_coll_block fy_coll_layout_block(const struct fy_coll_layout *l,
                                          int i);

/* Reduction to 'root' of count elements at 'in' (not MPI_IN_PLACE); the
 * result lands in rbuf at the root only. Commutative ops use a binomial
 * tree rooted at 'root'; others a tree rooted at rank 0 that combines in
 * rank order, whose result is then sent to the root. */
int fy_coll_reduce_tree(const void *in, void *rbuf, MPI_Count count,
                        struct fy_dtype *dt, struct fy_op *op, int root,
                        struct fy_comm *c, uint32_t seq);
int fy_coll_bcast_tree(void *buf, MPI_Count count, struct fy_dtype *dt,
                       int root, struct fy_comm *c, int tag);
/* Linear scatter(v) from root, on tag; layout of sbuf at the root, each
 * member receives rcount elements of rdt (rbuf MPI_IN_PLACE at the root:
 * its block stays in place). */
int fy_coll_scatter_lin(const struct fy_coll_layout *src, void *rbuf,
                        MPI_Count rcount, struct fy_dtype *rdt, int root,
                        struct fy_comm *c, int tag);

#endif /* FY_COLL_INT_H */
