/* SPDX-License-Identifier: MIT */
/* One transfer per mechanism kind, run by both processes in lockstep (the
 * seed's Table I): one-sided kinds do the whole copy in one process with
 * the registry's copy_remote; the two-sided kinds run on the shared
 * segment, following the seed:
 * - shmbuf: the library's own mover (fy_xfer_shmbuf_push/pull,
 *   xfer/shmbuf.c): two halves with a full/empty flag each, the sender
 *   filling one while the receiver drains the other;
 * - queue: the library's own mover (fy_xfer_queue_push/take,
 *   xfer/queue.c): the sender fills cells from its free queue and posts
 *   them on the receiver's receive queue; the receiver dequeues, copies
 *   out and returns the cell to the sender's free queue;
 * - net: the library's own loopback streams (fy_xfer_net_push/pull,
 *   xfer/net.c): connection, hello and per-message header as in a job. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab.h"
#include "shm/cellq_inl.h"

#define SLOT_ERROR UINT64_MAX /* P1's mbox value for a failed transfer */

/* ---- discovery and verification ------------------------------------------ */

static struct lab_mech *add_mech(struct lab *L, const struct fy_xfer_ops *ops,
                                 int xkind, enum lab_kind kind,
                                 const char *suffix)
{
    if (L->nmech == LAB_MAX_MECHS - 1) /* the last ok slot is lab_net_open's */
        return NULL;
    struct lab_mech *m = &L->mech[L->nmech++];
    memset(m, 0, sizeof(*m));
    snprintf(m->label, sizeof(m->label), "%s%s%s", ops->name, suffix ? " " : "",
             suffix ? suffix : "");
    m->ops = ops;
    m->xkind = xkind;
    m->kind = kind;
    m->ok = true;
    return m;
}

void lab_mechs_discover(struct lab *L)
{
    L->nmech = 0;
    for (int k = 0; k < FY_XFER_NKINDS; k++) {
        const struct fy_xfer_ops *ops = fy_xfer_registry[k];
        if (!ops)
            continue;
        char why[256] = "";
        bool works = ops->probe ? ops->probe(why, sizeof(why)) : true;
        struct lab_mech *m;
        if (ops->one_sided && ops->copy_remote) {
            m = add_mech(L, ops, k, LAB_GET, "get");
            struct lab_mech *p = add_mech(L, ops, k, LAB_PUT, "put");
            if (k == FY_XFER_CMA)
                /* The library's shared single copy: both copy chunks. */
                add_mech(L, ops, k, LAB_SPLIT, "split");
            if (k == FY_XFER_PROCMEM) {
                /* The seed's Ptrace as published: the library never
                 * stops a peer, the laboratory shows what that costs. */
                struct lab_mech *a = add_mech(L, ops, k, LAB_ATTACH, NULL);
                if (a)
                    snprintf(a->label, sizeof(a->label), "ptrace-attach");
            }
            if (!works) {
                for (int i = 0; i < L->nmech; i++)
                    if (L->mech[i].xkind == k) {
                        L->mech[i].ok = false;
                        snprintf(L->mech[i].why, sizeof(L->mech[i].why),
                                 "probe failed: %s", why);
                    }
            }
            (void)m;
            (void)p;
            continue;
        }
        enum lab_kind kind;
        if (!strcmp(ops->name, "shmbuf"))
            kind = LAB_SHMBUF;
        else if (!strcmp(ops->name, "queue"))
            kind = LAB_QUEUE;
        else if (!strcmp(ops->name, "net"))
            kind = LAB_NET;
        else {
            m = add_mech(L, ops, k, LAB_SHMBUF, NULL);
            if (m) {
                m->ok = false;
                snprintf(m->why, sizeof(m->why),
                         "a two-sided mechanism the laboratory has no "
                         "sender/receiver driver for yet");
            }
            continue;
        }
        m = add_mech(L, ops, k, kind, NULL);
        if (m && !works) {
            m->ok = false;
            snprintf(m->why, sizeof(m->why), "probe failed: %s", why);
        }
    }
    /* --only: keep just the named labels (others marked, not removed, so
     * both processes agree on indices). */
    if (L->opt.only) {
        for (int i = 0; i < L->nmech; i++) {
            char list[256];
            snprintf(list, sizeof(list), ",%s,", L->opt.only);
            char needle[40], needle2[40];
            snprintf(needle, sizeof(needle), ",%s,", L->mech[i].label);
            snprintf(needle2, sizeof(needle2), ",%s,", L->mech[i].ops->name);
            if (!strstr(list, needle) && !strstr(list, needle2) &&
                L->mech[i].ok) {
                L->mech[i].ok = false;
                snprintf(L->mech[i].why, sizeof(L->mech[i].why),
                         "not selected (--only)");
            }
        }
    }
}

void lab_fill_pattern(uint8_t *p, size_t len, unsigned salt)
{
    for (size_t i = 0; i < len; i++)
        p[i] = (uint8_t)(i * 131 + (i >> 9) + salt * 17 + 1);
}

bool lab_check_pattern(const uint8_t *p, size_t len, unsigned salt)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] != (uint8_t)(i * 131 + (i >> 9) + salt * 17 + 1))
            return false;
    return true;
}

static char verify_why[LAB_MAX_MECHS][128];

/* Each usable mechanism moves a few odd-sized patterns P0 -> P1 once and
 * P1 checks them byte for byte: a mechanism that fails here (e.g. ptrace
 * forbidden between these two processes) is reported, not measured. */
void lab_mechs_verify(struct lab *L)
{
    static const size_t sizes[] = {1, 4096 + 13, 100003, (1u << 20) + 77};
    lab_sb_config(L, L->lib_shmbuf);
    lab_queue_config(L, (uint32_t)L->lib_cell);
    for (int i = 0; i < L->nmech; i++) {
        struct lab_mech *m = &L->mech[i];
        if (!m->ok)
            continue;
        if (m->kind == LAB_NET && lab_net_open(L) != 0) {
            m->ok = false;
            snprintf(m->why, sizeof(m->why),
                     "cannot connect over 127.0.0.1 between the two processes");
            continue;
        }
        bool good = true;
        for (size_t s = 0; s < FY_ARRAY_LEN(sizes) && good; s++) {
            size_t off = L->rot; /* what lab_xfer_once will use */
            if (off + sizes[s] > L->region_size)
                off = 0;
            if (L->me == 0)
                lab_fill_pattern(L->pool + off, sizes[s], (unsigned)(i + s));
            else
                memset(L->pool + off, 0, sizes[s]);
            lab_barrier(L);
            uint64_t stamp = 0;
            lab_xfer_once(L, m, sizes[s], s & 1, 0, &stamp);
            lab_barrier(L);
            bool ok_here = true;
            if (L->me == 1) {
                if (L->h->mbox[0] == SLOT_ERROR)
                    ok_here = false;
                else if (!lab_check_pattern(L->pool + off, sizes[s],
                                            (unsigned)(i + s))) {
                    ok_here = false;
                    snprintf(verify_why[i], sizeof(verify_why[i]),
                             "data check failed at %zu bytes", sizes[s]);
                }
            } else if (stamp == SLOT_ERROR) {
                ok_here = false;
            }
            if (!ok_here)
                atomic_store(&L->h->mech_ok[i], 0);
            lab_barrier(L);
            good = atomic_load(&L->h->mech_ok[i]) != 0;
        }
        if (!good) {
            m->ok = false;
            /* P1's reason travels through the mbox as text. */
            if (L->me == 1)
                memcpy(&L->h->mbox[64], verify_why[i], sizeof(verify_why[i]));
            lab_barrier(L);
            char theirs[128];
            memcpy(theirs, &L->h->mbox[64], sizeof(theirs));
            theirs[sizeof(theirs) - 1] = '\0';
            snprintf(m->why, sizeof(m->why),
                     "fails between the two "
                     "processes: %.120s",
                     verify_why[i][0] ? verify_why[i]
                     : theirs[0]      ? theirs
                                      : "transfer error");
            lab_barrier(L);
        }
        if (m->kind == LAB_NET && !m->ok)
            lab_net_close(L); /* kept open for the measurements otherwise */
    }
}

/* ---- configuration of the two-sided drivers -------------------------------
 */

static struct fy_shmbuf_ctl *sb_ctl(struct lab *L, uint32_t half)
{
    return (struct fy_shmbuf_ctl *)(L->base + L->h->off_sb) + half;
}

static uint8_t *sb_data(struct lab *L, uint32_t half)
{
    return L->base + L->h->off_sb + 2 * sizeof(struct fy_shmbuf_ctl) +
           (size_t)half * LAB_MAX_SHMBUF;
}

/* Both processes call it (lockstep). Resets the flags and touches the
 * halves so page faults stay out of the timings. */
void lab_sb_config(struct lab *L, size_t half)
{
    lab_barrier(L);
    if (L->me == 0) {
        atomic_store(&sb_ctl(L, 0)->full, 0);
        atomic_store(&sb_ctl(L, 1)->full, 0);
        memset(sb_data(L, 0), 0, half);
        memset(sb_data(L, 1), 0, half);
    }
    L->sb_size = half;
    L->sb_half = 0;
    lab_barrier(L);
}

static uint64_t cell_off(struct lab *L, int owner, uint32_t i)
{
    return L->h->off_cells + (uint64_t)owner * LAB_NCELLS * LAB_MAX_CELL +
           (uint64_t)i * L->cell_size;
}

void lab_queue_config(struct lab *L, uint32_t cell_size)
{
    lab_barrier(L);
    L->cell_size = cell_size;
    fy_cells.cell_size = cell_size; /* cells are this far apart now */
    if (L->me == 0) {
        /* P0 owns the cells that carry data and lays out both queues. */
        fy_cellq_init(&L->q->rank[1].recvq);
        L->free_tail = fy_cellq_init(&L->q->rank[0].freeq);
        memset(L->base + cell_off(L, 0, 0), 0, (size_t)LAB_NCELLS * cell_size);
        for (uint32_t i = 0; i < LAB_NCELLS; i++)
            fy_cellq_push(&L->q->rank[0].freeq, cell_off(L, 0, i));
    }
    lab_barrier(L);
    if (L->me == 1)
        L->recv_tail = fy_shm_off(&L->q->rank[1].recvq.stub);
    lab_barrier(L);
}

/* The net driver runs the library's own endpoint (xfer/net.c): P1's
 * listener, P0's connection and hello, the per-message header, all as in
 * a job. One 1-byte message, waited for at most 5 s, proves the pair
 * connects before anything is timed. */
static bool past(uint64_t deadline, const struct lab_wait *w)
{
    return deadline && (w->spins & 0x3fff) == 0 && lab_now_ns() > deadline;
}

static int net_send(struct lab *L, uint64_t cookie, const uint8_t *src,
                    size_t len, uint64_t deadline)
{
    uint64_t done = 0;
    struct lab_wait w = {0};
    while (done < len) {
        int k = fy_xfer_net_push(1, cookie, src, len, &done);
        if (k < 0)
            return k;
        if (k > 0) {
            w = (struct lab_wait){0};
            continue;
        }
        lab_wait_step(L, &w);
        if (past(deadline, &w))
            return -ETIMEDOUT;
    }
    return 0;
}

static int net_recv(struct lab *L, uint64_t cookie, uint8_t *dst, size_t len,
                    uint64_t deadline)
{
    uint64_t c = 0, n = 0, done = 0;
    struct lab_wait w = {0};
    int k;
    while ((k = fy_xfer_net_pull_hdr(0, &c, &n)) == 0) {
        lab_wait_step(L, &w);
        if (past(deadline, &w))
            return -ETIMEDOUT;
    }
    if (k < 0)
        return k;
    if (c != cookie || n != len)
        return -EPROTO; /* checked as the library's rendezvous does */
    w = (struct lab_wait){0};
    while (done < len) {
        k = fy_xfer_net_pull(0, dst, len, &done);
        if (k < 0)
            return k;
        if (k > 0) {
            w = (struct lab_wait){0};
            continue;
        }
        lab_wait_step(L, &w);
        if (past(deadline, &w))
            return -ETIMEDOUT;
    }
    return 0;
}

int lab_net_open(struct lab *L)
{
    lab_net_close(L);
    char jobid[32];
    snprintf(jobid, sizeof(jobid), "ferry-bench-%d", (int)L->h->pid[0]);
    uint16_t port = 0;
    uint64_t key = 0;
    int rc = fy_xfer_net_open(L->me, 2, jobid, &port, &key);
    if (L->me == 1) {
        L->h->net_port = rc ? 0 : port;
        L->h->net_key = key;
    }
    lab_barrier(L);
    uint8_t byte = 0x5a;
    uint64_t deadline = lab_now_ns() + 5000000000ull;
    if (!rc && L->me == 0) {
        if (!L->h->net_port)
            rc = -ENOTCONN;
        else {
            fy_xfer_net_peer(1, (uint16_t)L->h->net_port, L->h->net_key);
            rc = net_send(L, 0, &byte, 1, deadline);
        }
    } else if (!rc) {
        byte = 0;
        rc = net_recv(L, 0, &byte, 1, deadline);
        if (!rc && byte != 0x5a)
            rc = -EPROTO;
    }
    if (rc)
        atomic_store(&L->h->mech_ok[LAB_MAX_MECHS - 1], 0);
    lab_barrier(L);
    bool ok = atomic_load(&L->h->mech_ok[LAB_MAX_MECHS - 1]) != 0;
    lab_barrier(L);
    if (L->me == 0)
        atomic_store(&L->h->mech_ok[LAB_MAX_MECHS - 1], 1);
    lab_barrier(L);
    if (!ok) {
        lab_net_close(L);
        return -ENOTCONN;
    }
    L->net_up = true;
    return 0;
}

void lab_net_close(struct lab *L)
{
    fy_xfer_net_close();
    L->net_up = false;
}

/* ---- the two-sided drivers --------------------------------------------------
 */

/* The library's own double-buffer mover (xfer/shmbuf.c) on the
 * laboratory's pad: halves LAB_MAX_SHMBUF apart, filled sb_size at a time
 * with the copy routine under test. */
static struct fy_shmbuf_xfer sb_xfer(struct lab *L, size_t len)
{
    return (struct fy_shmbuf_xfer){.pad = L->base + L->h->off_sb,
                                   .half_size = LAB_MAX_SHMBUF,
                                   .len = len,
                                   .chunk = L->sb_size,
                                   .cookie = 1,
                                   .copy = L->copy};
}

static void sb_send(struct lab *L, const uint8_t *src, size_t len)
{
    struct fy_shmbuf_xfer x = sb_xfer(L, len);
    uint64_t done = 0;
    do {
        /* Nothing moved: wait for the receiver to drain the next half. */
        if (fy_xfer_shmbuf_push(&x, &L->sb_half, src, &done) == 0)
            lab_wait_u32(L, &sb_ctl(L, L->sb_half)->full, 0);
    } while (done < len);
}

static uint64_t sb_recv(struct lab *L, uint8_t *dst, size_t len)
{
    struct fy_shmbuf_xfer x = sb_xfer(L, len);
    uint64_t done = 0;
    do {
        int k = fy_xfer_shmbuf_pull(&x, &L->sb_half, dst, &done);
        if (k < 0)
            lab_die(L, "double buffer: a half out of bounds");
        if (k == 0)
            lab_wait_u32(L, &sb_ctl(L, L->sb_half)->full, 1);
    } while (done < len);
    return lab_now_ns();
}

/* The library's own cell-queue mover (xfer/queue.c) on the laboratory's
 * queues: P0's free cells, P1's receive queue, cell_size apart. */
static struct fy_queue_xfer q_xfer(struct lab *L, size_t len)
{
    return (struct fy_queue_xfer){.freeq = &L->q->rank[0].freeq,
                                  .free_tail = &L->free_tail,
                                  .recvq = &L->q->rank[1].recvq,
                                  .payload = L->cell_size - FY_CELL_HDR,
                                  .len = len,
                                  .cookie = 1,
                                  .copy = L->copy};
}

static void q_send(struct lab *L, const uint8_t *src, size_t len)
{
    struct fy_queue_xfer x = q_xfer(L, len);
    uint64_t done = 0;
    struct lab_wait w = {0};
    do {
        if (fy_xfer_queue_push(&x, src, &done) > 0)
            w = (struct lab_wait){0};
        else /* every cell is with the receiver: wait for one back */
            lab_wait_step(L, &w);
    } while (done < len);
}

static uint64_t q_recv(struct lab *L, uint8_t *dst, size_t len)
{
    struct fy_queue_xfer x = q_xfer(L, len);
    uint64_t done = 0, t_end = 0;
    do {
        uint64_t off;
        struct lab_wait w = {0};
        while (!(off = fy_cellq_pop(&L->q->rank[1].recvq, &L->recv_tail)))
            lab_wait_step(L, &w);
        struct fy_queue_chunk ch = fy_xfer_queue_chunk(fy_shm_ptr(off));
        if (fy_xfer_queue_take(&x, &ch, dst, &done))
            lab_die(L, "queue: cell of %llu bytes at %llu out of bounds",
                    (unsigned long long)ch.len, (unsigned long long)ch.offset);
        if (done == len)
            t_end = lab_now_ns();
        fy_cellq_push(&L->q->rank[0].freeq, off);
    } while (done < len);
    return t_end;
}

/* The library's shared single copy (xfer/split.c), as its rendezvous runs
 * it: P1 (the receiver) opens a generation on its control block, asks P0
 * to help (the back line stands for the SPLIT packet: its buffer, the
 * generation and the chunk size) and copies chunks itself; P0 copies
 * chunks of that generation until none is left. P0 answers at once here,
 * as a sender waiting inside MPI does. */
static ssize_t split_get(struct lab *L, uint8_t *dst, uint64_t src, size_t len)
{
    struct fy_split_ctl *sc = &L->q->split;
    uint64_t chunk = fy_xfer_split_chunk(len);
    uint32_t gen = fy_xfer_split_open(sc, &L->split_gen);
    L->h->back.addr = (uint64_t)(uintptr_t)dst;
    L->h->back.len = len;
    L->h->back.aux = (uint64_t)gen | chunk << 32;
    lab_send_back(L);
    fy_xfer_split_copy_own(sc, gen, chunk, len, L->peer, dst, src, true);
    return fy_xfer_split_wait(sc, chunk, len);
}

static void split_help(struct lab *L, const uint8_t *src, size_t len)
{
    lab_wait_back(L);
    uint64_t aux = L->h->back.aux;
    if (L->h->back.len != len)
        lab_die(L, "cma split: asked for %llu bytes of a %zu-byte message",
                (unsigned long long)L->h->back.len, len);
    fy_xfer_split_copy(&L->q->split, (uint32_t)aux, aux >> 32, len, L->peer,
                       (uint8_t *)src, L->h->back.addr, false);
}

/* ---- one transfer
 * -------------------------------------------------------------- */

void lab_send_go(struct lab *L, uint64_t addr, uint64_t len)
{
    L->h->go.addr = addr;
    L->h->go.len = len;
    /* R2: pairs with A2 in lab_wait_seq: payload visible with seq. */
    atomic_store_explicit(&L->h->go.seq, ++L->go_seq, memory_order_release);
}

void lab_send_back(struct lab *L)
{
    atomic_store_explicit(&L->h->back.seq, ++L->back_seq, memory_order_release);
}

void lab_wait_go(struct lab *L)
{
    lab_wait_seq(L, &L->h->go.seq, ++L->go_seq);
}

void lab_wait_back(struct lab *L)
{
    lab_wait_seq(L, &L->h->back.seq, ++L->back_seq);
}

static void libc_copy(void *dst, const void *src, size_t len)
{
    memcpy(dst, src, len);
}

/* The two-sided drivers copy with the mechanism's own copy_local unless an
 * experiment substitutes another routine. */
static lab_copy_fn copy_for(struct lab *L, const struct lab_mech *m)
{
    if (L->copy_override)
        return L->copy_override;
    return m->ops->copy_local ? m->ops->copy_local : libc_copy;
}

static bool one_sided(const struct lab_mech *m)
{
    return m->kind == LAB_GET || m->kind == LAB_PUT || m->kind == LAB_ATTACH;
}

void lab_xfer_once(struct lab *L, const struct lab_mech *m, size_t len,
                   bool rndv, unsigned slot, uint64_t *p0_stamp)
{
    size_t off = lab_rot_next(L, len);
    uint8_t *mine = L->pool + off;
    uint64_t theirs = L->peer_pool + off;
    uint64_t *box = &L->h->mbox[slot];
    ssize_t n;

    if (L->me == 0) {
        uint64_t t0 = lab_now_ns();
        switch (m->kind) {
        case LAB_GET:
        case LAB_ATTACH:
            *p0_stamp = t0;
            if (rndv)
                lab_send_go(L, (uint64_t)(uintptr_t)mine, len);
            return;
        case LAB_PUT:
            if (rndv) {
                /* Sender-put rendezvous: RTS, the receiver's CTS names its
                 * buffer, then the write. */
                lab_send_go(L, (uint64_t)(uintptr_t)mine, len);
                lab_wait_back(L);
            }
            n = m->ops->copy_remote(L->peer, mine, theirs, len, false);
            *p0_stamp = n == (ssize_t)len ? lab_now_ns() - t0 : SLOT_ERROR;
            return;
        case LAB_SPLIT:
            *p0_stamp = t0;
            if (rndv)
                lab_send_go(L, (uint64_t)(uintptr_t)mine, len);
            split_help(L, mine, len);
            return;
        case LAB_SHMBUF:
        case LAB_QUEUE:
        case LAB_NET:
            *p0_stamp = t0;
            if (rndv) {
                lab_send_go(L, (uint64_t)(uintptr_t)mine, len);
                lab_wait_back(L);
            }
            L->copy = copy_for(L, m);
            if (m->kind == LAB_SHMBUF)
                sb_send(L, mine, len);
            else if (m->kind == LAB_QUEUE)
                q_send(L, mine, len);
            else if (net_send(L, ++L->net_cookie, mine, len, 0) != 0)
                lab_die(L, "net: send failed");
            return;
        }
        return;
    }

    /* P1, the destination. */
    switch (m->kind) {
    case LAB_GET:
    case LAB_ATTACH: {
        if (rndv)
            lab_wait_go(L);
        uint64_t t0 = lab_now_ns();
        n = m->kind == LAB_GET
                ? m->ops->copy_remote(L->peer, mine, theirs, len, true)
                : fy_xfer_procmem_attach_copy(L->peer, mine, theirs, len, true);
        uint64_t t1 = lab_now_ns();
        if (n != (ssize_t)len) {
            snprintf(verify_why[m - L->mech], sizeof(verify_why[0]), "%s",
                     n < 0 ? strerror((int)-n) : "short copy");
            *box = SLOT_ERROR;
        } else {
            *box = rndv ? t1 : t1 - t0;
        }
        return;
    }
    case LAB_PUT:
        if (rndv) {
            lab_wait_go(L);
            lab_send_back(L);
        }
        *box = 0;
        return;
    case LAB_SPLIT: {
        /* Timed as cma get: P1 may finish before P0 even starts (it needs
         * no help), so without rendezvous P1 times its own call. */
        if (rndv)
            lab_wait_go(L);
        uint64_t t0 = lab_now_ns();
        ssize_t got = split_get(L, mine, theirs, len);
        uint64_t t1 = lab_now_ns();
        if (got != (ssize_t)len) {
            snprintf(verify_why[m - L->mech], sizeof(verify_why[0]), "%s",
                     got < 0 ? strerror((int)-got) : "short copy");
            *box = SLOT_ERROR;
        } else {
            *box = rndv ? t1 : t1 - t0;
        }
        return;
    }
    case LAB_SHMBUF:
    case LAB_QUEUE:
    case LAB_NET:
        if (rndv) {
            lab_wait_go(L);
            lab_send_back(L);
        }
        L->copy = copy_for(L, m);
        if (m->kind == LAB_SHMBUF)
            *box = sb_recv(L, mine, len);
        else if (m->kind == LAB_QUEUE)
            *box = q_recv(L, mine, len);
        else {
            if (net_recv(L, ++L->net_cookie, mine, len, 0) != 0)
                lab_die(L, "net: receive failed");
            *box = lab_now_ns();
        }
        return;
    }
}

double lab_xfer_sample(struct lab *L, const struct lab_mech *m, bool rndv,
                       unsigned slot, uint64_t p0_stamp)
{
    uint64_t v = L->h->mbox[slot];
    if (v == SLOT_ERROR || p0_stamp == SLOT_ERROR)
        return -1;
    switch (m->kind) {
    case LAB_GET:
    case LAB_ATTACH:
    case LAB_SPLIT:
        /* Without rendezvous P1 timed its own call; with it, from P0's RTS
         * to P1 holding the data (same clock: CLOCK_MONOTONIC). */
        return rndv ? (double)(int64_t)(v - p0_stamp) / 1e3 : (double)v / 1e3;
    case LAB_PUT:
        return (double)p0_stamp / 1e3;
    default:
        return (double)(int64_t)(v - p0_stamp) / 1e3;
    }
}

bool lab_mech_one_sided(const struct lab_mech *m);
bool lab_mech_one_sided(const struct lab_mech *m)
{
    return one_sided(m);
}
