/* SPDX-License-Identifier: MIT */
/* Context ids: which ones this process uses, and the agreement that picks
 * a new one for a communicator being created, run as a nonblocking
 * schedule (src/coll/sched.c) that the progress engine advances, so that
 * MPI_Comm_idup never blocks and several agreements can be in flight on
 * different communicators, started in different orders on different
 * processes.
 *
 * The agreement works in rounds. In each, every member contributes a mask
 * of ids it could accept and the members compute the AND of the masks (a
 * dissemination all-reduce: AND does not mind seeing a contribution
 * twice). If the AND has a bit, the lowest one is the new id; otherwise
 * another round follows. Invariants, at each process:
 *
 * - A contribution is "held" until its round ends: two rounds in flight
 *   at the same time never hold the same bit, and a held bit is neither
 *   contributed again nor taken by anyone else. The id a round picks is
 *   in every member's contribution, so it is free at every member and no
 *   other agreement there can pick it; each member marks it used as the
 *   round ends, when it stops being held.
 * - At most two rounds hold bits at once: the "eager" holder and the
 *   "main" holder. Every other round in flight contributes zeros (and so
 *   cannot succeed).
 * - An agreement's first round may take the eager slot, with the free ids
 *   of the lower half of the space. It may wait indefinitely (until every
 *   member has started the agreement: MPI_Comm_idup on one process, a
 *   blocking constructor on another communicator on the next), so it
 *   must never hold what other agreements need: the upper half stays
 *   available. An uncontended agreement succeeds in this one round.
 * - Later rounds start only when the previous round completed, that is
 *   once every member has joined, so they end in bounded time. Of the
 *   agreements past their first round, the one with the smallest key
 *   (context id of the communicator it runs over, then its collective
 *   number there: the same at every member) takes the main slot as soon
 *   as it is free, with every free id not held by the eager round. So the
 *   globally smallest such agreement eventually holds the main slot at
 *   all its members in the same round and succeeds, then the next one:
 *   no deadlock and no livelock, whatever order the program started them
 *   in.
 * - A round in which every member held the main slot, with no free id
 *   held back by an eager round, and whose AND is empty means the ids are
 *   exhausted: -ENOSPC everywhere at once.
 *
 * The traffic runs on the communicator's collective context (ctx + 1)
 * with tags from 2^30 up, above every tag FY_COLL_TAG makes, keyed by the
 * agreement's collective number, its round and the step; a private copy
 * of the communicator keeps the rounds from consuming the real one's
 * collective numbers. Not thread safe (the MPI layer serialises calls). */
#include "comm/comm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_int.h"
#include "p2p/p2p.h"

/* Context ids this process is not using: bit i stands for ctx 2i.
 * Disjoint communicators (split colours) may share an id: matching is per
 * (context, sender), so they can never see each other's messages. */
#define FY_CTX_WORDS (FY_CTX_MAX / 2u / 32u)
/* First rounds take ids from the lower half only. */
#define FY_CTX_EAGER_WORDS (FY_CTX_WORDS / 2u)
static uint32_t s_ctx_free[FY_CTX_WORDS];

/* The last word of a contribution: flags, AND-ed like the mask. */
#define FY_AGREE_MAIN 1u  /* contributed as the main holder */
#define FY_AGREE_CLEAN 2u /* and no free id was held by an eager round */
#define FY_AGREE_LEN (FY_CTX_WORDS + 1u)

/* Agreement rounds use tags 2^30 + (seq mod 2^22) * 256 + round * 32 +
 * step. Members are at most two rounds apart (a round ends for one only
 * after every member has started it), so eight round numbers suffice. */
#define FY_AGREE_TAG(seq, round, step)                                         \
    ((int)(0x40000000u | (((uint32_t)(seq)&0x3fffffu) << 8) |                  \
           (((uint32_t)(round)&7u) << 5) | ((uint32_t)(step)&31u)))

enum fy_agree_slot { FY_SLOT_NONE, FY_SLOT_EAGER, FY_SLOT_MAIN };

struct fy_ctx_agree {
    /* A private copy of the communicator the agreement runs over (its
     * ctx, group, rank and size): schedules created on it take their
     * collective numbers from the copy, not from the real one. */
    struct fy_comm over;
    struct fy_comm *ref; /* the real one, referenced meanwhile, or NULL */
    uint32_t seq;        /* its collective number on the real one */
    uint32_t round;
    bool later; /* past the first round: competes for the main slot */
    bool done;
    bool orphan; /* nobody wants the id: drop it, free when done */
    bool local;  /* a communicator of one: no rounds (agree_local) */
    int err;
    uint32_t ctx;
    struct fy_comm *newcomm; /* receives ctx when done (MPI_Comm_idup) */
    enum fy_agree_slot slot;
    uint32_t held[FY_CTX_WORDS]; /* what this round holds (its mask) */
    uint32_t acc[FY_AGREE_LEN];  /* contribution, then the AND so far */
    uint32_t in[FY_AGREE_LEN];   /* one step's incoming contribution */
    /* Schedules of this agreement not freed yet, the running one last.
     * A finished round is freed only from a later round's end reached
     * outside any of this agreement's calls into the scheduler ('depth'
     * 0), when none of its frames can be on the stack. */
    struct fy_sched **scheds;
    uint32_t nscheds, capscheds;
    unsigned depth;
    struct fy_ctx_agree *prev, *next; /* s_agrees */
};

/* Agreements not done yet (orphans included). */
static struct fy_ctx_agree *s_agrees;
/* Orphans that are done, to free at the next safe point. */
static struct fy_ctx_agree *s_dead;
static struct fy_ctx_agree *s_eager, *s_main;

void fy_ctx_mark(uint32_t ctx, bool free_it)
{
    if (ctx >= FY_CTX_MAX)
        return; /* FY_CTX_NONE: a communicator still waiting for its id */
    uint32_t bit = ctx / 2u;
    if (free_it)
        s_ctx_free[bit / 32u] |= 1u << (bit % 32u);
    else
        s_ctx_free[bit / 32u] &= ~(1u << (bit % 32u));
}

static bool agree_before(const struct fy_ctx_agree *a,
                         const struct fy_ctx_agree *b)
{
    if (a->over.ctx != b->over.ctx)
        return a->over.ctx < b->over.ctx;
    return a->seq < b->seq;
}

/* Whether ag is the first, by key, of the agreements past their first
 * round here. */
static bool agree_first_later(const struct fy_ctx_agree *ag)
{
    for (const struct fy_ctx_agree *o = s_agrees; o; o = o->next)
        if (o != ag && o->later && !o->done && agree_before(o, ag))
            return false;
    return true;
}

/* Fill ag->acc with this round's contribution and take a slot if it may
 * (the invariants at the top of the file). */
static void agree_contribute(struct fy_ctx_agree *ag)
{
    memset(ag->acc, 0, sizeof(ag->acc));
    if (!ag->later && !s_eager) {
        for (uint32_t w = 0; w < FY_CTX_EAGER_WORDS; w++)
            ag->acc[w] = s_ctx_free[w] & ~(s_main ? s_main->held[w] : 0u);
        s_eager = ag;
        ag->slot = FY_SLOT_EAGER;
    } else if (ag->later && !s_main && agree_first_later(ag)) {
        bool clean = true;
        for (uint32_t w = 0; w < FY_CTX_WORDS; w++) {
            uint32_t eager = s_eager ? s_eager->held[w] : 0u;
            if (s_ctx_free[w] & eager)
                clean = false;
            ag->acc[w] = s_ctx_free[w] & ~eager;
        }
        ag->acc[FY_CTX_WORDS] = FY_AGREE_MAIN | (clean ? FY_AGREE_CLEAN : 0u);
        s_main = ag;
        ag->slot = FY_SLOT_MAIN;
    }
    memcpy(ag->held, ag->acc, sizeof(ag->held));
}

static void agree_release(struct fy_ctx_agree *ag)
{
    if (ag->slot == FY_SLOT_EAGER)
        s_eager = NULL;
    else if (ag->slot == FY_SLOT_MAIN)
        s_main = NULL;
    ag->slot = FY_SLOT_NONE;
    memset(ag->held, 0, sizeof(ag->held));
}

static void agree_unlink(struct fy_ctx_agree *ag)
{
    if (ag->prev)
        ag->prev->next = ag->next;
    else if (s_agrees == ag)
        s_agrees = ag->next;
    if (ag->next)
        ag->next->prev = ag->prev;
    ag->prev = ag->next = NULL;
}

static void agree_finish(struct fy_ctx_agree *ag, int err, uint32_t ctx)
{
    agree_release(ag);
    agree_unlink(ag);
    ag->done = true;
    ag->err = err;
    ag->ctx = ctx;
    if (err == 0 && ag->orphan) {
        fy_ctx_mark(ctx, true); /* nobody will use it */
    } else if (err == 0 && ag->newcomm) {
        ag->newcomm->ctx = ctx; /* already marked used */
    }
    if (ag->orphan) {
        ag->next = s_dead;
        s_dead = ag;
    }
}

static int agree_round(struct fy_ctx_agree *ag);

/* The last step of every round: runs inside the scheduler. */
static void agree_round_done(struct fy_ctx_agree *ag)
{
    if (ag->depth == 0 && ag->nscheds > 1) {
        /* Outside our own calls into the scheduler: every round but the
         * one that is ending has left the stack. */
        for (uint32_t i = 0; i + 1 < ag->nscheds; i++)
            fy_sched_free(ag->scheds[i]);
        ag->scheds[0] = ag->scheds[ag->nscheds - 1];
        ag->nscheds = 1;
    }
    agree_release(ag);
    for (uint32_t w = 0; w < FY_CTX_WORDS; w++) {
        if (ag->acc[w]) {
            uint32_t ctx = (w * 32u + (uint32_t)__builtin_ctz(ag->acc[w])) * 2u;
            fy_ctx_mark(ctx, false);
            agree_finish(ag, 0, ctx);
            return;
        }
    }
    uint32_t all = FY_AGREE_MAIN | FY_AGREE_CLEAN;
    if (ag->later && (ag->acc[FY_CTX_WORDS] & all) == all) {
        FY_ERROR("no free context id left (%u communicators alive)",
                 FY_CTX_MAX / 2u);
        agree_finish(ag, -ENOSPC, 0);
        return;
    }
    ag->later = true;
    ag->round++;
    int rc = agree_round(ag);
    if (rc != 0)
        agree_finish(ag, rc, 0);
}

/* sched.c has no step that calls back: a reduction with a user function
 * is one, run in order after the steps before it. */
static void agree_step_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)inout;
    (void)len;
    (void)dt;
    agree_round_done(in);
}

static struct fy_op s_agree_step_op = {
    .handle = MPI_OP_NULL,
    .builtin = false,
    .commute = true,
    .user_fn = agree_step_fn,
    .refcount = 1, /* ours: schedules' references never free it */
};

/* Contribute and start one round: the dissemination AND, then
 * agree_round_done. Returns 0 or a negative errno (nothing started). */
static int agree_round(struct fy_ctx_agree *ag)
{
    struct fy_dtype *u32 = fy_dtype_get(MPI_UINT32_T);
    struct fy_dtype *byte = fy_dtype_get(MPI_BYTE);
    struct fy_op *band = fy_op_get(MPI_BAND);
    if (!u32 || !byte || !band)
        return -EINVAL;
    if (ag->nscheds == ag->capscheds) {
        uint32_t cap = ag->capscheds ? 2 * ag->capscheds : 4;
        void *n = realloc(ag->scheds, cap * sizeof(*ag->scheds));
        if (!n)
            return -ENOMEM;
        ag->scheds = n;
        ag->capscheds = cap;
    }
    agree_contribute(ag);
    struct fy_sched *s;
    int rc = fy_sched_create(&ag->over, true, &s);
    if (rc != 0) {
        agree_release(ag);
        return rc;
    }
    int n = ag->over.size, me = ag->over.rank;
    for (int step = 0, dist = 1; dist < n; step++, dist *= 2) {
        int tag = FY_AGREE_TAG(ag->seq, ag->round, step);
        fy_sched_send(s, ag->acc, FY_AGREE_LEN, u32, (me + dist) % n, tag);
        fy_sched_recv(s, ag->in, FY_AGREE_LEN, u32, (me - dist + n) % n, tag);
        fy_sched_wait(s);
        fy_sched_reduce(s, ag->in, ag->acc, FY_AGREE_LEN, u32, band);
    }
    fy_sched_reduce(s, ag, ag, 1, byte, &s_agree_step_op);
    ag->scheds[ag->nscheds++] = s;
    ag->depth++;
    struct fy_sched *started;
    rc = fy_sched_finish(s, &started); /* may run the whole round */
    ag->depth--;
    if (rc != 0) {
        ag->nscheds--; /* freed by fy_sched_finish, before running */
        agree_release(ag);
    }
    return rc;
}

/* A communicator of one: any free id that no round holds will do. All
 * held means wait for a round to end (it will: it needs no help from us);
 * none free means none left. */
static void agree_local(struct fy_ctx_agree *ag)
{
    bool any = false;
    for (uint32_t w = 0; w < FY_CTX_WORDS; w++) {
        uint32_t m = s_ctx_free[w] & ~(s_eager ? s_eager->held[w] : 0u) &
                     ~(s_main ? s_main->held[w] : 0u);
        if (m) {
            uint32_t ctx = (w * 32u + (uint32_t)__builtin_ctz(m)) * 2u;
            fy_ctx_mark(ctx, false);
            agree_finish(ag, 0, ctx);
            return;
        }
        any |= s_ctx_free[w] != 0;
    }
    if (!any) {
        FY_ERROR("no free context id left (%u communicators alive)",
                 FY_CTX_MAX / 2u);
        agree_finish(ag, -ENOSPC, 0);
    }
}

/* Free the orphans that finished. Only from the MPI calls themselves,
 * never from inside the scheduler. */
static void agree_reap(void)
{
    while (s_dead) {
        struct fy_ctx_agree *ag = s_dead;
        s_dead = ag->next;
        ag->next = NULL;
        fy_ctx_agree_free(ag);
    }
}

int fy_ctx_agree_start(struct fy_comm *over, bool keep, struct fy_comm *newcomm,
                       struct fy_ctx_agree **out)
{
    agree_reap();
    /* The collective number is taken first, whatever happens next, so
     * this member stays in step with the others. */
    uint32_t seq = fy_coll_begin(over);
    struct fy_ctx_agree *ag = calloc(1, sizeof(*ag));
    if (!ag)
        return -ENOMEM;
    ag->over = (struct fy_comm){
        .handle = over->handle,
        .refcount = 1, /* ours: never released, never freed */
        .ctx = over->ctx,
        .rank = over->rank,
        .size = over->size,
        .group = over->group,
        .p2p_group = over->p2p_group,
        .errhandler = over->errhandler,
    };
    ag->seq = seq;
    if (newcomm) {
        fy_comm_retain(newcomm);
        ag->newcomm = newcomm;
    }
    if (over->size == 1) {
        /* Nobody to agree with: done here, now or (when every free id
         * is held by a round in flight) at a later test. */
        ag->local = true;
        agree_local(ag);
        *out = ag;
        return 0;
    }
    if (keep) {
        fy_comm_retain(over);
        ag->ref = over;
    }
    ag->next = s_agrees;
    if (s_agrees)
        s_agrees->prev = ag;
    s_agrees = ag;
    int rc = agree_round(ag);
    if (rc != 0) {
        agree_unlink(ag);
        fy_ctx_agree_free(ag);
        return rc;
    }
    *out = ag;
    return 0;
}

bool fy_ctx_agree_test(struct fy_ctx_agree *ag, int *err_out, uint32_t *ctx_out)
{
    if (!ag->done && ag->local)
        agree_local(ag);
    if (!ag->done)
        return false;
    *err_out = ag->err;
    if (ctx_out)
        *ctx_out = ag->ctx;
    return true;
}

void fy_ctx_agree_orphan(struct fy_ctx_agree *ag)
{
    if (ag->newcomm)
        fy_comm_release(ag->newcomm);
    ag->newcomm = NULL;
    if (ag->local && !ag->done) {
        fy_ctx_agree_free(ag); /* nobody else waits for it */
        return;
    }
    if (ag->done) {
        if (ag->err == 0)
            fy_ctx_mark(ag->ctx, true);
        fy_ctx_agree_free(ag);
        return;
    }
    ag->orphan = true;
}

void fy_ctx_agree_free(struct fy_ctx_agree *ag)
{
    if (!ag)
        return;
    /* A schedule still running is waited for by fy_sched_free. */
    for (uint32_t i = 0; i < ag->nscheds; i++)
        fy_sched_free(ag->scheds[i]);
    free(ag->scheds);
    if (ag->newcomm)
        fy_comm_release(ag->newcomm);
    if (ag->ref)
        fy_comm_release(ag->ref);
    free(ag);
}

int fy_comm_ctx_alloc(struct fy_comm *parent, uint32_t *ctx_out)
{
    struct fy_ctx_agree *ag;
    int rc = fy_ctx_agree_start(parent, false, NULL, &ag);
    if (rc != 0)
        return rc;
    unsigned spins = 0;
    int err;
    uint32_t ctx;
    while (!fy_ctx_agree_test(ag, &err, &ctx)) {
        if (fy_progress())
            spins = 0;
        else
            fy_progress_idle(&spins);
    }
    fy_ctx_agree_free(ag);
    if (err == 0)
        *ctx_out = ctx;
    return err;
}

void fy_ctx_init(void)
{
    memset(s_ctx_free, 0xff, sizeof(s_ctx_free));
    s_agrees = s_dead = s_eager = s_main = NULL;
}

void fy_ctx_finalize(void)
{

    agree_reap();
}
