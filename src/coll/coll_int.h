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
#define FY_COLL_TAG(seq, step)                                                 \
    ((int)((((uint32_t)(seq)&0x3fffffu) << 8) | ((uint32_t)(step)&0xffu)))

/* Start a collective on c: its sequence number. Every member calls the
 * collectives of c in the same order, so the numbers agree. */
static inline uint32_t fy_coll_begin(struct fy_comm *c)
{
    return c->coll_seq++;
}

/* Keep the first error seen. */
static inline int fy_coll_keep(int err, int rc)
{
    return err ? err : rc;
}

static inline char *fy_coll_at(const void *buf, MPI_Aint off)
{
    return (char *)buf + off;
}

/* ---- schedules (sched.c) ---------------------------------------------
 * Builders append steps; nothing moves until the schedule runs. Builder
 * calls never fail: the first allocation failure is remembered and makes
 * fy_sched_finish return -ENOMEM without running anything, so builders
 * need no error checks (a NULL temporary is never dereferenced at build
 * time). */

/* Start building collective number fy_coll_begin(c) on c; nb says whether
 * it will be nonblocking (then it holds references on c, datatypes and
 * ops). Returns 0 or -ENOMEM. */
int fy_sched_create(struct fy_comm *c, bool nb, struct fy_sched **out);
/* The communicator new steps run on, and the collective number their
 * tags use there (FY_SCHED_TAG). */
uint32_t fy_sched_seq(const struct fy_sched *s);
struct fy_comm *fy_sched_comm(const struct fy_sched *s);
/* Steps added from now on run on c: either the schedule's own
 * communicator, or one second communicator (an intercommunicator's local
 * intracommunicator), of which each switch to it takes a new collective
 * number. Every member of c must make the same switches in the same
 * order. A nonblocking schedule holds a reference on the second one. */
void fy_sched_on(struct fy_sched *s, struct fy_comm *c);
/* Tag of step 'step' of the collective s. */
#define FY_SCHED_TAG(s, step) FY_COLL_TAG(fy_sched_seq(s), step)
void fy_sched_send(struct fy_sched *s, const void *buf, MPI_Count count,
                   struct fy_dtype *dt, int peer, int tag);
void fy_sched_recv(struct fy_sched *s, void *buf, MPI_Count count,
                   struct fy_dtype *dt, int peer, int tag);
void fy_sched_copy(struct fy_sched *s, const void *src, MPI_Count scount,
                   struct fy_dtype *sdt, void *dst, MPI_Count rcount,
                   struct fy_dtype *rdt);
/* inout = in op inout, when the step runs. */
void fy_sched_reduce(struct fy_sched *s, const void *in, void *inout,
                     MPI_Count count, struct fy_dtype *dt, struct fy_op *op);
/* Later steps start only once every request started so far completed. */
void fy_sched_wait(struct fy_sched *s);
/* A temporary laid out like count elements of dt, freed with s. */
void *fy_sched_tmp(struct fy_sched *s, MPI_Count count,
                   const struct fy_dtype *dt);
/* nb_out NULL: run s to the end, free it, return its result. Otherwise
 * start it and hand it over in *nb_out (0), or free it and return the
 * build error. */
int fy_sched_finish(struct fy_sched *s, struct fy_sched **nb_out);
/* When the schedule ends without error, unpack 'bytes' of packed data at
 * src into 'count' elements of dt at dst (at once if it has ended). */
void fy_sched_unpack_after(struct fy_sched *s, const void *src, MPI_Count bytes,
                           void *dst, MPI_Count count, struct fy_dtype *dt);
/* Hand an allocation to the schedule, freed with it. */
void fy_sched_adopt(struct fy_sched *s, void *p);

/* A nonblocking schedule may instead run a state machine: step advances
 * it as far as it can without waiting for another rank and returns true
 * once it is finished, its result (0 or a negative errno) in *err; free
 * releases st (called once, after the machine finished); visible says,
 * without changing anything, whether what the last step stopped at
 * (another rank's flag in shared memory) now holds, so a rank about to
 * sleep does not miss a wake-up that came before it announced its sleep.
 * The machine replaces the steps (a schedule has one or the other). */
struct fy_sched_mach {
    bool (*step)(void *st, int *err);
    void (*free)(void *st);
    bool (*visible)(const void *st);
};
void fy_sched_set_mach(struct fy_sched *s, const struct fy_sched_mach *m,
                       void *st);

/* Create a schedule for a collective on c or return -ENOMEM from the
 * calling function. */
#define FY_SCHED_BEGIN(s, c, nb)                                               \
    struct fy_sched *s;                                                        \
    do {                                                                       \
        int rc_ = fy_sched_create(c, (nb) != NULL, &s);                        \
        if (rc_ != 0)                                                          \
            return rc_;                                                        \
    } while (0)

/* The schedule of a uniform collective (one count per member, which all
 * must agree on): a receive its message does not fill is reported as
 * -EBADMSG (MPI_ERR_COUNT, coll/shm.h's fy_coll_sig). The v, w and
 * neighbourhood forms accept a shorter message, as a receive does. */
void fy_sched_exact(struct fy_sched *s);

/* The bytes count elements of dt span in a user buffer, from the first
 * element's true lower bound (holes included). */
MPI_Aint fy_coll_tmp_span(MPI_Count count, const struct fy_dtype *dt);

/* A buffer for count elements of dt laid out as in a user buffer (holes
 * included): returns the address to use as the buffer and the allocation
 * to free in *base_out, or NULL. */
void *fy_coll_tmp_alloc(MPI_Count count, const struct fy_dtype *dt,
                        void **base_out);

struct fy_coll_block {
    char *ptr;
    MPI_Count count;
    struct fy_dtype *dt;
};

struct fy_coll_block fy_coll_layout_block(const struct fy_coll_layout *l,
                                          int i);

/* Shared building blocks (reduce.c, gather.c). */

/* Reduction to 'root' of count elements at 'in' (not MPI_IN_PLACE); the
 * result lands in rbuf at the root only. Commutative ops use a binomial
 * tree rooted at 'root'; others a tree rooted at rank 0 that combines in
 * rank order, whose result is then sent to the root. Uses tag steps 0-1. */
void fy_coll_build_reduce(struct fy_sched *s, const void *in, void *rbuf,
                          MPI_Count count, struct fy_dtype *dt,
                          struct fy_op *op, int root);
/* Binomial broadcast from root on tag step 'step'. */
void fy_coll_build_bcast(struct fy_sched *s, void *buf, MPI_Count count,
                         struct fy_dtype *dt, int root, int step);
/* Linear scatter(v) from root on tag step 'step': layout of the source at
 * the root; each member receives rcount elements of rdt (rbuf
 * MPI_IN_PLACE at the root: its block stays in place). */
void fy_coll_build_scatter(struct fy_sched *s, const struct fy_coll_layout *src,
                           void *rbuf, MPI_Count rcount, struct fy_dtype *rdt,
                           int root, int step);

#endif /* FY_COLL_INT_H */
