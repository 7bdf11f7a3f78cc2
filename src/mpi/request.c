/* SPDX-License-Identifier: MIT */
/* MPI_Request handle table and the completion steps every Wait/Test flavour
 * shares: polling, status filling, freeing, orphaned requests (freed by the
 * user while active) and persistent request objects. */
#include "mpi/request.h"

#include <errno.h>
#include <stdlib.h>

#include "coll/coll.h"
#include "util/mt.h"

struct fy_handle_table fy_mreq_table = FY_HANDLE_TABLE_INIT(FY_HT_REQUEST);

/* Requests MPI_Request_free'd while active: tagged words (send, receive or
 * ext). Polled from completion calls; usually empty, so the check is one
 * predicted branch on a global counter. */
static uintptr_t *orphans;
static unsigned orphans_cap;
unsigned fy_mreq_norphans;

int fy_mreq_register(uintptr_t word, MPI_Request *handle_out)
{
    int h;
    int rc = fy_handle_alloc(&fy_mreq_table, (void *)word, &h);
    if (FY_UNLIKELY(rc))
        return rc;
    enum fy_mreq_tag tag = fy_mreq_tag(word);
    if (tag == FY_MREQ_SEND || tag == FY_MREQ_RECV)
        ((struct fy_req *)fy_mreq_obj(word))->handle = h;
    *handle_out = h;
    return 0;
}

int fy_mreq_ext_register(struct fy_mreq_ext *x, MPI_Request *handle_out)
{
    int rc = fy_mreq_register((uintptr_t)x | FY_MREQ_EXT, handle_out);
    if (rc == 0)
        x->handle = *handle_out;
    return rc;
}

void fy_mreq_status_empty(MPI_Status *st)
{
    if ((uintptr_t)st <= (uintptr_t)MPI_STATUS_IGNORE)
        return;
    fy_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, false);
}

void fy_mreq_status_send(MPI_Status *st, bool cancelled, int errclass)
{
    if ((uintptr_t)st <= (uintptr_t)MPI_STATUS_IGNORE)
        return;
    /* MPI leaves a send's source and tag undefined; keep whatever the
     * caller had rather than invent values. */
    fy_mreq_status_recv(st, st->MPI_SOURCE, st->MPI_TAG, 0, cancelled,
                        errclass);
}

/* MPI 3.2.8/3.7.3: a receive from MPI_PROC_NULL completes at once with
 * source MPI_PROC_NULL, tag MPI_ANY_TAG and count 0. */
static void status_proc_null(MPI_Status *st)
{
    fy_mreq_status_recv(st, MPI_PROC_NULL, MPI_ANY_TAG, 0, false, MPI_SUCCESS);
}

static int err_class(int err)
{
    if (FY_LIKELY(err == 0 || err == -ECANCELED))
        return MPI_SUCCESS; /* a cancelled request completes normally */
    if (err == -EMSGSIZE)
        return MPI_ERR_TRUNCATE;
    return fy_errno_to_class(err);
}

/* Status of a complete core request; returns its error class. */
static int core_status(const struct fy_req *r, bool is_recv, MPI_Status *st)
{
    int cls = err_class(r->err);
    if (is_recv)
        fy_mreq_status_recv(st, r->st_source, r->st_tag, r->st_bytes,
                            r->cancelled, cls);
    else
        fy_mreq_status_send(st, r->cancelled, cls);
    return cls;
}

int fy_mreq_peek(uintptr_t w, MPI_Status *st)
{
    void *o = fy_mreq_obj(w);
    switch (fy_mreq_tag(w)) {
    case FY_MREQ_SEND:
        return core_status(o, false, st);
    case FY_MREQ_RECV:
        return core_status(o, true, st);
    case FY_MREQ_PERSIST: {
        struct fy_preq *p = o;
        bool is_recv = fy_preq_is_recv(p);
        if (!p->active) {
            fy_mreq_status_empty(st);
            return MPI_SUCCESS;
        }
        if (p->coll) { /* a collective's status is the empty one */
            int cls = err_class(fy_pcoll_err(p->coll));
            fy_mreq_status_recv(st, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, false, cls);
            return cls;
        }
        if (p->r && p->kind == FY_PREQ_PRECV) {
            /* The data travelled under an internal tag (part.c); the
             * status names the user's. */
            int cls = err_class(p->r->err);
            fy_mreq_status_recv(st, p->r->st_source, p->tag, p->r->st_bytes,
                                p->r->cancelled, cls);
            return cls;
        }
        if (p->r)
            return core_status(p->r, is_recv, st);
        if (p->part_err) {
            int cls = err_class(p->part_err);
            fy_mreq_status_send(st, false, cls);
            return cls;
        }
        if (is_recv)
            status_proc_null(st);
        else
            fy_mreq_status_send(st, p->bwatch.cancelled, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    case FY_MREQ_EXT: {
        struct fy_mreq_ext *x = o;
        if (x->ops->query) {
            MPI_Status tmp;
            bool ign = (uintptr_t)st <= (uintptr_t)MPI_STATUS_IGNORE;
            return x->ops->query(x, ign ? &tmp : st);
        }
        int cls = err_class(x->err);
        fy_mreq_status_recv(st, x->st_source, x->st_tag, x->st_bytes,
                            x->cancelled, cls);
        return cls;
    }
    case FY_MREQ_DONE_SEND:
        fy_mreq_status_send(st, false, MPI_SUCCESS);
        return MPI_SUCCESS;
    case FY_MREQ_DONE_NULL:
    default:
        status_proc_null(st);
        return MPI_SUCCESS;
    }
}

int fy_mreq_complete(MPI_Request *h, uintptr_t w, MPI_Status *st,
                     struct fy_comm **comm_out)
{
    int cls = fy_mreq_peek(w, st);
    void *o = fy_mreq_obj(w);
    struct fy_comm *comm = NULL;

    switch (fy_mreq_tag(w)) {
    case FY_MREQ_SEND:
    case FY_MREQ_RECV: {
        struct fy_req *r = o;
        comm = r->comm;
        fy_req_free(r);
        break;
    }
    case FY_MREQ_PERSIST: {
        /* A persistent request survives completion, inactive. */
        struct fy_preq *p = o;
        if (p->r)
            fy_req_free(p->r);
        p->r = NULL;
        p->active = false;
        *comm_out = p->comm;
        return cls;
    }
    case FY_MREQ_EXT: {
        struct fy_mreq_ext *x = o;
        comm = x->comm;
        int frc = x->ops->free(x);
        if (cls == MPI_SUCCESS)
            cls = frc;
        break;
    }
    default:
        break;
    }
    fy_handle_release(&fy_mreq_table, *h);
    *h = MPI_REQUEST_NULL;
    *comm_out = comm;
    return cls;
}

/* Drive the engine until the request polls done (requests the core does
 * not know: ext ones and persistent collectives). */
static void wait_polling(uintptr_t w)
{
    unsigned spins = 0;
    while (!fy_mreq_poll(w)) {
        if (fy_progress() == 0)
            fy_progress_idle(&spins);
        else
            spins = 0;
    }
}

void fy_mreq_wait_done(uintptr_t w)
{
    void *o = fy_mreq_obj(w);
    switch (fy_mreq_tag(w)) {
    case FY_MREQ_SEND:
    case FY_MREQ_RECV:
        (void)fy_req_wait(o); /* the error is read back from r->err */
        return;
    case FY_MREQ_PERSIST: {
        struct fy_preq *p = o;
        if (p->coll || p->held || p->bwatch.pending)
            wait_polling(w); /* a held partitioned send: MPI_Pready from
                                another thread (MPI 4.0 4.2.4); a buffered
                                send being cancelled */
        else if (p->active && p->r)
            (void)fy_req_wait(p->r);
        return;
    }
    case FY_MREQ_EXT:
        wait_polling(w);
        return;
    default:
        return;
    }
}

/* ---- orphans --------------------------------------------------------- */

static void orphan_add(uintptr_t w)
{
    if (fy_mreq_norphans == orphans_cap) {
        unsigned ncap = orphans_cap ? orphans_cap * 2 : 16;
        uintptr_t *n = realloc(orphans, ncap * sizeof(*n));
        if (!n) {
            /* Keeping the request alive forever is the only safe choice:
             * the core may still write into it. Leak it, loudly. */
            FY_WARN("out of memory tracking a freed active request; "
                    "its memory will not be reclaimed");
            return;
        }
        orphans = n;
        orphans_cap = ncap;
    }
    orphans[fy_mreq_norphans++] = w;
}

/* Release a persistent request's object and references (its core
 * request, if any, is the caller's business). */
static void preq_destroy(struct fy_preq *p)
{
    if (p->coll)
        fy_pcoll_destroy(p->coll);
    free(p->ready);
    if (p->dt && !p->dt->builtin)
        fy_dtype_release(p->dt);
    if (!p->comm->builtin)
        fy_comm_release(p->comm);
    free(p);
}

/* Free an orphan whose work is over. */
static void orphan_free(uintptr_t w)
{
    void *o = fy_mreq_obj(w);
    if (fy_mreq_tag(w) == FY_MREQ_EXT) {
        struct fy_mreq_ext *x = o;
        if (x->handle != MPI_REQUEST_NULL)
            fy_handle_release(&fy_mreq_table, x->handle);
        int rc = x->ops->free(x);
        if (rc != MPI_SUCCESS) /* MPI_Request_free'd: nobody to tell */
            FY_WARN("a freed request's release returned error %d", rc);
    } else {
        fy_req_free(o);
    }
}

void fy_mreq_orphans_poll(void)
{
    unsigned keep = 0;
    for (unsigned i = 0; i < fy_mreq_norphans; i++) {
        uintptr_t w = orphans[i];
        if (fy_mreq_poll(w))
            orphan_free(w);
        else
            orphans[keep++] = w;
    }
    fy_mreq_norphans = keep;
}

void fy_mreq_free(MPI_Request *h, uintptr_t w)
{
    void *o = fy_mreq_obj(w);
    switch (fy_mreq_tag(w)) {
    case FY_MREQ_SEND:
    case FY_MREQ_RECV:
        if (fy_mreq_poll(w))
            orphan_free(w);
        else
            orphan_add(w);
        break;
    case FY_MREQ_EXT:
        /* An ext request keeps its handle until it completes: a freed
         * generalized request is still named in MPI_Grequest_complete.
         * orphan_free() releases it. */
        *h = MPI_REQUEST_NULL;
        if (fy_mreq_poll(w))
            orphan_free(w);
        else
            orphan_add(w);
        return;
    case FY_MREQ_PERSIST: {
        struct fy_preq *p = o;
        if (p->kind == FY_PREQ_PSEND || p->kind == FY_PREQ_PRECV)
            fy_part_release(p);
        if (p->bwatch.pending)
            fy_bsend_forget(&p->bwatch);
        if (p->r) {
            if (p->r->complete)
                fy_req_free(p->r);
            else
                orphan_add((uintptr_t)p->r |
                           (fy_preq_is_recv(p) ? FY_MREQ_RECV : FY_MREQ_SEND));
        }
        preq_destroy(p);
        break;
    }
    default:
        break;
    }
    fy_handle_release(&fy_mreq_table, *h);
    *h = MPI_REQUEST_NULL;
}

int fy_mreq_cancel(uintptr_t w)
{
    void *o = fy_mreq_obj(w);
    switch (fy_mreq_tag(w)) {
    case FY_MREQ_RECV: {
        struct fy_req *r = o;
        if (!r->complete)
            fy_p2p_cancel_recv(r);
        return MPI_SUCCESS;
    }
    case FY_MREQ_PERSIST: {
        struct fy_preq *p = o;
        if (p->active && p->r && fy_preq_is_recv(p) && !p->r->complete)
            fy_p2p_cancel_recv(p->r);
        else if (p->active && p->r && p->kind == FY_PREQ_SEND)
            fy_p2p_cancel_send(p->r);
        else if (p->active && !p->r && p->kind == FY_PREQ_BSEND)
            fy_bsend_cancel(p->bsend_id, &p->bwatch); /* once: bsend.c */
        return MPI_SUCCESS;
    }
    case FY_MREQ_EXT: {
        struct fy_mreq_ext *x = o;
        /* Generalized requests want it even when complete (cancel_fn's
         * 'complete' argument). */
        return x->ops->cancel ? x->ops->cancel(x) : MPI_SUCCESS;
    }
    case FY_MREQ_SEND:
        /* Even a complete one: its message may still be unmatched at
         * the receiver (p2p/cancel.c asks it). */
        fy_p2p_cancel_send(o);
        return MPI_SUCCESS;
    default:
        /* Sends born complete with nothing to take back (MPI_PROC_NULL;
         * buffered ones are ext requests: bsend.c). */
        return MPI_SUCCESS;
    }
}

/* ---- persistent requests --------------------------------------------- */

int fy_preq_create(enum fy_preq_kind kind, enum fy_send_mode mode,
                   const void *buf, MPI_Count count, struct fy_dtype *dt,
                   int peer, int tag, struct fy_comm *comm,
                   MPI_Request *handle_out)
{
    struct fy_preq *p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    p->kind = (uint8_t)kind;
    p->mode = (uint8_t)mode;
    p->buf = (void *)buf; /* sends never write through it */
    p->count = count;
    p->dt = dt;
    p->comm = comm;
    p->peer = peer;
    p->tag = tag;
    int rc = fy_mreq_register((uintptr_t)p | FY_MREQ_PERSIST, handle_out);
    if (rc) {
        free(p);
        return rc;
    }
    /* The user may free the datatype or communicator while the request
     * lives; keep both until MPI_Request_free. */
    if (!dt->builtin)
        fy_mt_ref_inc(&dt->refcount);
    if (!comm->builtin)
        comm->refcount++;
    return 0;
}

int fy_preq_create_coll(struct fy_pcoll *pc, struct fy_comm *comm,
                        MPI_Request *handle_out)
{
    struct fy_preq *p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    p->kind = FY_PREQ_COLL;
    p->comm = comm;
    p->coll = pc;
    int rc = fy_mreq_register((uintptr_t)p | FY_MREQ_PERSIST, handle_out);
    if (rc) {
        free(p);
        return rc;
    }
    if (!comm->builtin)
        comm->refcount++;
    return 0;
}

/* ---- finalize -------------------------------------------------------- */

/* MPI_Finalize completes the receives the program freed while active
 * (MPI_Request_free: their messages may still be on the way), so a freed
 * receive may be cancelled only once no message can come for it: when
 * every other rank has entered MPI_Finalize and everything it sent before
 * has reached this rank's matching. Each rank sends every other one an
 * empty marker (on MPI_COMM_SELF's collective context, where nothing from
 * another rank ever travels), after all its messages in the pair's order;
 * a rank that has seen every peer's marker has seen all it will ever
 * receive. Done only when some rank holds such a receive (one all-reduce
 * says; the markers are 2(P-1) empty messages per rank). */
static void drain_before_cancel(void)
{
    struct fy_comm *w = fy_comm_get(MPI_COMM_WORLD);
    if (!w || w->size < 2)
        return;
    int mine = 0, any = 0;
    for (unsigned i = 0; i < fy_mreq_norphans && !mine; i++)
        mine = fy_mreq_tag(orphans[i]) == FY_MREQ_RECV &&
               !((struct fy_req *)fy_mreq_obj(orphans[i]))->complete;
    if (fy_coll_allreduce(&mine, &any, 1, fy_dtype_get(MPI_INT),
                          fy_op_get(MPI_MAX), w, NULL) != 0 ||
        !any)
        return;
    struct fy_dtype *byte = fy_dtype_get(MPI_BYTE);
    uint32_t ctx = FY_CTX_SELF + 1;
    int n = w->size;
    struct fy_req **rq = calloc(2 * (size_t)n, sizeof(*rq));
    if (!rq)
        fy_fatal(1, "MPI_Finalize: out of memory draining messages");
    for (int p = 0; p < n; p++)
        if (p != w->rank &&
            (fy_p2p_irecv(NULL, 0, byte, p, 0, w, ctx, &rq[p]) != 0 ||
             fy_p2p_isend(NULL, 0, byte, p, 0, w, ctx, FY_SEND_STANDARD,
                          &rq[n + p]) != 0))
            fy_fatal(1, "MPI_Finalize: out of memory draining messages");
    for (int i = 0; i < 2 * n; i++)
        if (rq[i]) {
            fy_req_wait(rq[i]);
            fy_req_free(rq[i]);
        }
    free(rq);
}

void fy_mpi_requests_finalize(bool world)
{
    fy_bsend_flush();
    if (world)
        drain_before_cancel();

    /* Orphaned receives that never matched would wait forever: cancel
     * them (a matched one completes as usual). */
    for (unsigned i = 0; i < fy_mreq_norphans; i++) {
        uintptr_t w = orphans[i];
        if (fy_mreq_tag(w) == FY_MREQ_RECV) {
            struct fy_req *r = fy_mreq_obj(w);
            if (!r->complete)
                fy_p2p_cancel_recv(r);
        }
    }
    unsigned spins = 0;
    for (;;) {
        fy_mreq_orphans_poll();
        if (fy_mreq_norphans == 0)
            break;
        if (fy_progress() == 0)
            fy_progress_idle(&spins);
        else
            spins = 0;
    }
    free(orphans);
    orphans = NULL;
    orphans_cap = 0;

    /* Persistent requests the user never freed own heap memory and
     * references; everything else in the table belongs to the core's pool
     * or to other modules. */
    for (uint32_t i = 0; i < fy_handle_count(&fy_mreq_table); i++) {
        uintptr_t w = (uintptr_t)fy_handle_at(&fy_mreq_table, i);
        if (w && fy_mreq_tag(w) == FY_MREQ_PERSIST) {
            struct fy_preq *p = fy_mreq_obj(w);
            if (p->kind == FY_PREQ_PSEND || p->kind == FY_PREQ_PRECV)
                fy_part_release(p);
            if (p->r && p->r->complete)
                fy_req_free(p->r);
            preq_destroy(p);
        }
    }
    fy_handle_table_reset(&fy_mreq_table);
}

/* ---- generalized requests (MPI 13.2) ---------------------------------- */

/* The user's callbacks behind an ext request. Completion is the user's
 * MPI_Grequest_complete; status and error come from query_fn when the
 * request is waited for, tested or inspected. free_fn's error becomes the
 * completing call's error (MPI 13.2) when query_fn reported none. */
struct fy_greq {
    struct fy_mreq_ext ext;
    MPI_Grequest_query_function *query_fn;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel_fn;
    void *extra_state;
};

static void greq_progress(struct fy_mreq_ext *x)
{
    (void)x;
}

static int greq_free(struct fy_mreq_ext *x)
{
    struct fy_greq *g = (struct fy_greq *)x;
    int rc = g->free_fn ? g->free_fn(g->extra_state) : MPI_SUCCESS;
    free(g);
    return rc;
}

static int greq_cancel(struct fy_mreq_ext *x)
{
    struct fy_greq *g = (struct fy_greq *)x;
    return g->cancel_fn ? g->cancel_fn(g->extra_state, x->complete)
                        : MPI_SUCCESS;
}

static int greq_query(struct fy_mreq_ext *x, MPI_Status *st)
{
    struct fy_greq *g = (struct fy_greq *)x;
    if (!g->query_fn) {
        fy_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, false);
        return MPI_SUCCESS;
    }
    return g->query_fn(g->extra_state, st);
}

static const struct fy_mreq_ext_ops greq_ops = {
    .progress = greq_progress,
    .free = greq_free,
    .cancel = greq_cancel,
    .query = greq_query,
};

FY_API int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn,
                               MPI_Grequest_free_function *free_fn,
                               MPI_Grequest_cancel_function *cancel_fn,
                               void *extra_state, MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK_REQ_PTR(request, NULL, __func__);
    struct fy_greq *g = calloc(1, sizeof(*g));
    if (!g)
        return fy_mpi_err(NULL, MPI_ERR_NO_MEM, __func__,
                          "out of memory for a generalized request");
    g->ext.ops = &greq_ops;
    g->query_fn = query_fn;
    g->free_fn = free_fn;
    g->cancel_fn = cancel_fn;
    g->extra_state = extra_state;
    if (fy_mreq_ext_register(&g->ext, request)) {
        free(g);
        return fy_mpi_err(NULL, MPI_ERR_NO_MEM, __func__,
                          "out of memory for a request handle");
    }
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Grequest_start)

FY_API int PMPI_Grequest_complete(MPI_Request request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    uintptr_t w = request == MPI_REQUEST_NULL ? 0 : fy_mreq_lookup(request);
    struct fy_mreq_ext *x = fy_mreq_obj(w);
    FY_CHECK(w && fy_mreq_tag(w) == FY_MREQ_EXT && x->ops == &greq_ops, NULL,
             MPI_ERR_REQUEST, __func__,
             "request 0x%x is not a generalized request", (unsigned)request);
    x->complete = true;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Grequest_complete)
