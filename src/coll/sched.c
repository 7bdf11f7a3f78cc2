/* SPDX-License-Identifier: MIT */
/* Collective schedules: every collective algorithm is written once as a
 * list of steps (start a send, start a receive, copy, combine, wait for
 * the requests started so far). A blocking collective runs its schedule
 * to the end at once; a nonblocking one is advanced whenever the program
 * tests or waits on it, or from the progress hook, until it is done.
 * An intercommunicator's schedule also carries steps on the local group's
 * hidden intracommunicator (fy_sched_on), so that its local halves and
 * the exchange between the groups are one nonblocking operation. */
#include "coll/coll_int.h"
#include "coll/shm.h"
#include "util/objcache.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum fy_step_kind {
    FY_STEP_SEND,   /* isend(src, scount, sdt) to peer */
    FY_STEP_RECV,   /* irecv(dst, rcount, rdt) from peer */
    FY_STEP_COPY,   /* local typed copy src -> dst */
    FY_STEP_REDUCE, /* dst = src op dst, rcount elements of rdt */
    FY_STEP_WAIT,   /* every request started so far must complete */
};

struct fy_sched_step {
    uint8_t kind;
    bool sub; /* runs on the schedule's 'sub' communicator */
    int peer, tag;
    const void *src;
    void *dst;
    MPI_Count scount, rcount;
    struct fy_dtype *sdt, *rdt;
    struct fy_op *op;
};

struct fy_sched {
    struct fy_comm *comm;
    uint32_t seq; /* this collective's sequence number on comm */
    /* A second communicator some steps run on (an intercommunicator's
     * local intracommunicator), or NULL; while building, 'on_sub' says
     * which one new steps go to and 'sub_seq' is the collective number
     * last taken on sub. */
    struct fy_comm *sub;
    bool on_sub;
    uint32_t sub_seq;
    bool nb; /* nonblocking: holds references, sits on the list */
    bool done;
    bool busy;  /* being advanced (re-entrance guard) */
    int err;    /* first error, from building or running */
    bool exact; /* receives must be filled (fy_sched_exact) */
    uint32_t nsteps, cap, cur;
    struct fy_sched_step *steps;
    struct fy_req **reqs; /* started since the last WAIT */
    uint32_t nreqs, reqcap;
    void **tmps; /* allocations to free with the schedule */
    uint32_t ntmps, tmpcap;
    /* A state machine run instead of steps (shm_nb.c's nonblocking
     * collectives over shared memory), or NULL. */
    const struct fy_sched_mach *mach;
    void *mst;
    bool listed;                  /* on the active list */
    struct fy_sched *prev, *next; /* active nonblocking schedules */
    /* fy_sched_unpack_after: packed data unpacked into the program's
     * buffer when the schedule ends (post_dt NULL: none). */
    const void *post_src;
    MPI_Count post_bytes, post_count;
    void *post_dst;
    struct fy_dtype *post_dt;
};

/* The schedule has ended: what fy_sched_unpack_after asked for. */
static void fy_sched_ended(struct fy_sched *s)
{
    s->done = true;
    if (!s->post_dt)
        return;
    if (!s->err)
        fy_dtype_unpack(s->post_src, s->post_bytes, s->post_dst, s->post_count,
                        s->post_dt);
    if (!s->post_dt->builtin)
        fy_dtype_release(s->post_dt);
    s->post_dt = NULL;
}

/* Nonblocking schedules not yet done, so the progress hook can advance
 * them while the program blocks somewhere else. */
static struct fy_sched *s_active;
unsigned fy_coll_nactive;

static void fy_sched_unlink(struct fy_sched *s)
{
    if (!s->listed)
        return;
    if (s->prev)
        s->prev->next = s->next;
    else
        s_active = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->prev = s->next = NULL;
    s->listed = false;
    fy_coll_nactive--;
}

static bool fy_sched_grow(void **arr, uint32_t *cap, size_t elem)
{
    uint32_t ncap = *cap ? *cap * 2 : 8;
    void *n = realloc(*arr, ncap * elem);
    if (!n)
        return false;
    *arr = n;
    *cap = ncap;
    return true;
}

static struct fy_objcache s_sched_cache = {.size = sizeof(struct fy_sched)};

/* Large temporaries (fy_sched_tmp, from TMP_KEEP_MIN to TMP_KEEP_MAX
 * bytes) are kept for the next schedule, up to TMP_KEEP blocks, below
 * MPI_THREAD_MULTIPLE: malloc'd per collective, glibc gave each one back
 * to the kernel (brk, munmap) and the next faulted its pages in again
 * while the other ranks waited (reduce-scatter of 1 MiB between two ranks
 * over these schedules: 1716-1744 us, 169-177 with the block kept;
 * bench/README.md). A kept block starts with a header holding its size
 * and is listed in s->tmps with its low bit set. */
#define TMP_KEEP_MIN ((size_t)64 << 10)
#define TMP_KEEP_MAX ((size_t)8 << 20)
#define TMP_KEEP 4
#define TMP_HDR ((size_t)64) /* keeps the data 16-byte aligned */
static struct {
    void *p;
    size_t cap;
} s_tmp_keep[TMP_KEEP];

/* A block of at least 'bytes' after a header (NULL: out of memory). */
static void *tmp_take(size_t bytes)
{
    for (int i = 0; i < TMP_KEEP; i++)
        if (s_tmp_keep[i].p && s_tmp_keep[i].cap >= bytes) {
            void *p = s_tmp_keep[i].p;
            s_tmp_keep[i].p = NULL;
            return p;
        }
    char *p = malloc(TMP_HDR + bytes);
    if (p)
        memcpy(p, &bytes, sizeof(bytes));
    return p;
}

/* Keep block p (from tmp_take) in an empty place, else in place of the
 * smallest kept one if smaller; else free it. */
static void tmp_give(void *p)
{
    size_t cap;
    memcpy(&cap, p, sizeof(cap));
    int at = -1;
    for (int i = 0; i < TMP_KEEP; i++)
        if (!s_tmp_keep[i].p) {
            at = i;
            break;
        } else if (s_tmp_keep[i].cap < cap &&
                   (at < 0 || s_tmp_keep[i].cap < s_tmp_keep[at].cap)) {
            at = i;
        }
    if (at < 0 || fy_mt_on) {
        free(p);
        return;
    }
    free(s_tmp_keep[at].p);
    s_tmp_keep[at].p = p;
    s_tmp_keep[at].cap = cap;
}

void fy_coll_caches_drain(void)
{
    fy_objcache_drain(&s_sched_cache);
    fy_coll_shm_nb_caches_drain();
    for (int i = 0; i < TMP_KEEP; i++) {
        free(s_tmp_keep[i].p);
        s_tmp_keep[i].p = NULL;
    }
}

void fy_sched_exact(struct fy_sched *s)
{
    s->exact = true;
}

int fy_sched_create(struct fy_comm *c, bool nb, struct fy_sched **out)
{
    /* The sequence number is taken even if we fail below, so this member
     * stays in step with the others on later collectives. */
    uint32_t seq = fy_coll_begin(c);
    struct fy_sched *s = fy_objcache_get(&s_sched_cache);
    if (!s)
        return -ENOMEM;
    s->comm = c;
    s->seq = seq;
    s->nb = nb;
    if (nb)
        fy_comm_retain(c);
    *out = s;
    return 0;
}

uint32_t fy_sched_seq(const struct fy_sched *s)
{
    return s->on_sub ? s->sub_seq : s->seq;
}
struct fy_comm *fy_sched_comm(const struct fy_sched *s)
{
    return s->on_sub ? s->sub : s->comm;
}

void fy_sched_on(struct fy_sched *s, struct fy_comm *c)
{
    if (c == s->comm) {
        s->on_sub = false;
        return;
    }
    if (!s->sub) {
        s->sub = c;
        if (s->nb)
            fy_comm_retain(c);
    }
    assert(s->sub == c); /* one second communicator per schedule */
    /* A fresh number on sub for every stretch of steps there: the members
     * of c build the same stretches in the same order, so they agree. */
    s->sub_seq = fy_coll_begin(c);
    s->on_sub = true;
}

static struct fy_sched_step *fy_sched_push(struct fy_sched *s, uint8_t kind)
{
    if (s->err)
        return NULL;
    if (s->nsteps == s->cap &&
        !fy_sched_grow((void **)&s->steps, &s->cap, sizeof(*s->steps))) {
        s->err = -ENOMEM;
        return NULL;
    }
    struct fy_sched_step *st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof(*st));
    st->kind = kind;
    st->sub = s->on_sub;
    return st;
}

/* A nonblocking collective keeps its datatypes and op alive: MPI lets the
 * program free them before the operation completes. */
static void fy_sched_hold(struct fy_sched *s, struct fy_sched_step *st)
{
    if (!s->nb)
        return;
    if (st->sdt && !st->sdt->builtin)
        fy_dtype_retain(st->sdt);
    if (st->rdt && !st->rdt->builtin)
        fy_dtype_retain(st->rdt);
    if (st->op && !st->op->builtin)
        fy_op_retain(st->op);
}

void fy_sched_send(struct fy_sched *s, const void *buf, MPI_Count count,
                   struct fy_dtype *dt, int peer, int tag)
{
    struct fy_sched_step *st = fy_sched_push(s, FY_STEP_SEND);
    if (!st)
        return;
    st->src = buf;
    st->scount = count;
    st->sdt = dt;
    st->peer = peer;
    st->tag = tag;
    fy_sched_hold(s, st);
}

void fy_sched_recv(struct fy_sched *s, void *buf, MPI_Count count,
                   struct fy_dtype *dt, int peer, int tag)
{
    struct fy_sched_step *st = fy_sched_push(s, FY_STEP_RECV);
    if (!st)
        return;
    st->dst = buf;
    st->rcount = count;
    st->rdt = dt;
    st->peer = peer;
    st->tag = tag;
    fy_sched_hold(s, st);
}

void fy_sched_copy(struct fy_sched *s, const void *src, MPI_Count scount,
                   struct fy_dtype *sdt, void *dst, MPI_Count rcount,
                   struct fy_dtype *rdt)
{
    struct fy_sched_step *st = fy_sched_push(s, FY_STEP_COPY);
    if (!st)
        return;
    st->src = src;
    st->scount = scount;
    st->sdt = sdt;
    st->dst = dst;
    st->rcount = rcount;
    st->rdt = rdt;
    fy_sched_hold(s, st);
}

void fy_sched_reduce(struct fy_sched *s, const void *in, void *inout,
                     MPI_Count count, struct fy_dtype *dt, struct fy_op *op)
{
    struct fy_sched_step *st = fy_sched_push(s, FY_STEP_REDUCE);
    if (!st)
        return;
    st->src = in;
    st->dst = inout;
    st->rcount = count;
    st->rdt = dt;
    st->op = op;
    fy_sched_hold(s, st);
}

void fy_sched_wait(struct fy_sched *s)
{
    /* Two WAITs in a row, or one first, would be no-ops: skip them. */
    if (s->nsteps == 0 || s->steps[s->nsteps - 1].kind == FY_STEP_WAIT)
        return;
    fy_sched_push(s, FY_STEP_WAIT);
}

void *fy_sched_tmp(struct fy_sched *s, MPI_Count count,
                   const struct fy_dtype *dt)
{
    if (s->err)
        return NULL;
    if (s->ntmps == s->tmpcap &&
        !fy_sched_grow((void **)&s->tmps, &s->tmpcap, sizeof(*s->tmps))) {
        s->err = -ENOMEM;
        return NULL;
    }
    MPI_Aint span = fy_coll_tmp_span(count, dt);
    if ((size_t)span >= TMP_KEEP_MIN && (size_t)span <= TMP_KEEP_MAX &&
        !fy_mt_on) {
        char *p = tmp_take((size_t)span);
        if (!p) {
            s->err = -ENOMEM;
            return NULL;
        }
        s->tmps[s->ntmps++] = (void *)((uintptr_t)p | 1);
        /* The first byte of data is at buf + true_lb. */
        return p + TMP_HDR - dt->true_lb;
    }
    void *base;
    void *buf = fy_coll_tmp_alloc(count, dt, &base);
    if (!buf) {
        s->err = -ENOMEM;
        return NULL;
    }
    s->tmps[s->ntmps++] = base;
    return buf;
}

static void fy_sched_start_req(struct fy_sched *s,
                               const struct fy_sched_step *st)
{
    struct fy_comm *c = st->sub ? s->sub : s->comm;
    struct fy_req *r = NULL;
    int rc;
    if (s->nreqs == s->reqcap &&
        !fy_sched_grow((void **)&s->reqs, &s->reqcap, sizeof(*s->reqs))) {
        s->err = fy_coll_keep(s->err, -ENOMEM);
        return;
    }
    if (st->kind == FY_STEP_SEND)
        rc = fy_p2p_isend(st->src, st->scount, st->sdt, st->peer, st->tag, c,
                          c->ctx + 1, FY_SEND_STANDARD, &r);
    else
        rc = fy_p2p_irecv(st->dst, st->rcount, st->rdt, st->peer, st->tag, c,
                          c->ctx + 1, &r);
    if (rc != 0) {
        s->err = fy_coll_keep(s->err, rc);
        return;
    }
    s->reqs[s->nreqs++] = r;
}

/* Finish the requests started since the last WAIT. Without 'block',
 * returns false (keeping them) as soon as one is still running. */
static bool fy_sched_reap(struct fy_sched *s, bool block)
{
    if (!block)
        for (uint32_t i = 0; i < s->nreqs; i++)
            if (!s->reqs[i]->complete)
                return false;
    for (uint32_t i = 0; i < s->nreqs; i++) {
        struct fy_req *r = s->reqs[i];
        int rc = block ? fy_req_wait(r) : r->err;
        /* A uniform collective's messages fill their receives exactly
         * (MPI has the members' type signatures agree): a shorter one is
         * counts that differ between members (fy_coll_sig). MPI_PROC_NULL
         * (a topology's missing neighbour) sends nothing. */
        if (rc == 0 && s->exact && r->kind == FY_REQ_RECV &&
            r->peer != MPI_PROC_NULL &&
            r->st_bytes < r->count * (MPI_Count)r->dt->size)
            rc = -EBADMSG;
        s->err = fy_coll_keep(s->err, rc);
        fy_req_free(r);
    }
    s->nreqs = 0;
    return true;
}

/* Run steps until the schedule ends or (without 'block') must wait.
 * After an error the remaining steps still run, so that the other
 * members are not left waiting for our messages. */
static void fy_sched_advance(struct fy_sched *s, bool block)
{
    if (s->done || s->busy)
        return;
    s->busy = true;
    if (s->mach) {
        /* The machine never blocks; blocking here means looping on it
         * with the engine running, politely when ranks share cores. */
        unsigned spins = 0;
        int err = 0;
        while (!s->mach->step(s->mst, &err)) {
            if (!block)
                goto out;
            if (fy_progress() == 0)
                fy_progress_idle(&spins);
            else
                spins = 0;
        }
        s->err = fy_coll_keep(s->err, err);
        fy_sched_ended(s);
        goto out;
    }
    while (!s->done) {
        if (s->cur == s->nsteps) {
            if (fy_sched_reap(s, block))
                fy_sched_ended(s);
            break;
        }
        const struct fy_sched_step *st = &s->steps[s->cur];
        switch (st->kind) {
        case FY_STEP_SEND:
        case FY_STEP_RECV:
            fy_sched_start_req(s, st);
            break;
        case FY_STEP_COPY: {
            int rc = fy_coll_copy(st->src, st->scount, st->sdt, st->dst,
                                  st->rcount, st->rdt);
            /* Our own block, shorter than the receive block: as a
             * receive left short (fy_sched_reap). */
            if (rc == 0 && s->exact &&
                st->scount * (MPI_Count)st->sdt->size <
                    st->rcount * (MPI_Count)st->rdt->size)
                rc = -EBADMSG;
            s->err = fy_coll_keep(s->err, rc);
            break;
        }
        case FY_STEP_REDUCE:
            s->err = fy_coll_keep(s->err, fy_op_apply(st->op, st->src, st->dst,
                                                      st->rcount, st->rdt));
            break;
        case FY_STEP_WAIT:
            if (!fy_sched_reap(s, block))
                goto out;
            break;
        }
        s->cur++;
    }
out:
    if (s->done)
        fy_sched_unlink(s); /* nothing left for the progress hook */
    s->busy = false;
}

void fy_sched_free(struct fy_sched *s)
{
    if (!s)
        return;
    if (s->mach) {
        /* A machine the program freed before it finished: the other
         * members count on it, so see it through first. */
        fy_sched_advance(s, true);
        s->mach->free(s->mst);
    }
    fy_sched_unlink(s);
    if (s->nb) {
        for (uint32_t i = 0; i < s->nsteps; i++) {
            struct fy_sched_step *st = &s->steps[i];
            if (st->sdt && !st->sdt->builtin)
                fy_dtype_release(st->sdt);
            if (st->rdt && !st->rdt->builtin)
                fy_dtype_release(st->rdt);
            if (st->op && !st->op->builtin)
                fy_op_release(st->op);
        }
        fy_comm_release(s->comm);
        if (s->sub)
            fy_comm_release(s->sub);
    }
    /* Requests still running (the program freed an incomplete nonblocking
     * collective) must finish before their buffers go away. */
    fy_sched_reap(s, true);
    if (s->post_dt && !s->post_dt->builtin) /* never ended */
        fy_dtype_release(s->post_dt);
    for (uint32_t i = 0; i < s->ntmps; i++) {
        uintptr_t t = (uintptr_t)s->tmps[i];
        if (t & 1)
            tmp_give((void *)(t & ~(uintptr_t)1));
        else
            free(s->tmps[i]);
    }
    free(s->tmps);
    free(s->reqs);
    free(s->steps);
    fy_objcache_put(&s_sched_cache, s);
}

void fy_sched_unpack_after(struct fy_sched *s, const void *src, MPI_Count bytes,
                           void *dst, MPI_Count count, struct fy_dtype *dt)
{
    assert(!s->post_dt);
    if (s->done) {
        if (!s->err)
            fy_dtype_unpack(src, bytes, dst, count, dt);
        return;
    }
    if (!dt->builtin)
        fy_dtype_retain(dt);
    s->post_src = src;
    s->post_bytes = bytes;
    s->post_dst = dst;
    s->post_count = count;
    s->post_dt = dt;
}

void fy_sched_adopt(struct fy_sched *s, void *p)
{
    if (s->ntmps == s->tmpcap &&
        !fy_sched_grow((void **)&s->tmps, &s->tmpcap, sizeof(*s->tmps))) {
        /* Out of memory for the list: let the schedule finish with
         * it first. */
        fy_sched_advance(s, true);
        free(p);
        return;
    }
    s->tmps[s->ntmps++] = p;
}

void fy_sched_set_mach(struct fy_sched *s, const struct fy_sched_mach *m,
                       void *st)
{
    assert(s->nb && s->nsteps == 0 && !s->mach);
    s->mach = m;
    s->mst = st;
}

int fy_sched_finish(struct fy_sched *s, struct fy_sched **nb_out)
{
    if (!nb_out) {
        if (!s->err)
            fy_sched_advance(s, true);
        int err = s->err;
        fy_sched_free(s);
        return err;
    }
    if (s->err) {
        int err = s->err;
        fy_sched_free(s);
        return err;
    }
    s->next = s_active;
    if (s_active)
        s_active->prev = s;
    s_active = s;
    s->listed = true;
    fy_coll_nactive++;
    /* The p2p progress engine drives active schedules through this hook
     * (p2p sits below coll and does not call it by name). */
    fy_p2p_hook_set(FY_HOOK_COLL, fy_coll_progress);
    fy_p2p_visible_hook = fy_coll_visible;
    fy_sched_advance(s, false); /* start the first round now */
    *nb_out = s;
    return 0;
}

bool fy_sched_test(struct fy_sched *s, int *err_out)
{
    fy_sched_advance(s, false);
    if (!s->done)
        return false;
    *err_out = s->err;
    return true;
}

bool fy_coll_visible(void)
{
    for (const struct fy_sched *s = s_active; s; s = s->next)
        if (s->mach && !s->done && s->mach->visible && s->mach->visible(s->mst))
            return true;
    return false;
}

int fy_coll_progress(void)
{
    static bool in_progress;
    if (in_progress)
        return 0;
    in_progress = true;
    int finished = 0;
    for (struct fy_sched *s = s_active, *next; s; s = next) {
        next = s->next; /* s may leave the list when it finishes */
        fy_sched_advance(s, false);
        finished += s->done; /* it left the list: its request may wait */
    }
    in_progress = false;
    return finished;
}
