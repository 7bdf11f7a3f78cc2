/* SPDX-License-Identifier: MIT */
/* Multi-process stress of the lock-free cell queues: three producer
 * processes push numbered cells into one receive queue while the consumer
 * returns every cell to its owner's free queue (itself an MPSC queue with
 * the consumer as one of its producers). Checks FIFO order per producer,
 * that nothing is lost or duplicated, and that cells cycle. Then: a link
 * scribbled over in shared memory ends the consumer or producer with
 * "malformed queue link" instead of steering a read or write. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "shm/cellq_inl.h"

#define NPROD 3
#define PER_PRODUCER 100000

static uint64_t recv_tail, free_tail[NPROD + 1];

static void producer(int me)
{
    for (uint64_t i = 0; i < PER_PRODUCER; i++) {
        uint64_t off;
        while (!(off = fy_cellq_pop(fy_cellq_freeq(me), &free_tail[me])))
            sched_yield();
        struct fy_cell *c = fy_shm_ptr(off);
        c->src = (uint32_t)me;
        c->seq = i;
        c->total = i * 2654435761u; /* payload check */
        fy_cellq_push(fy_cellq_recvq(0), off);
    }
    _exit(0);
}

int main(void)
{
    alarm(120);
    int fd = memfd_create("ferry-test-cellq", MFD_CLOEXEC);
    /* A segment of the cell queues alone (shm's own region, then theirs). */
    struct fy_shm_layout lay;
    fy_shm_layout_init(&lay, NPROD + 1);
    TAP_EQ_INT(fy_cellq_declare(&lay, 1024, 16), 0, "cell queues declared");
    TAP_EQ_INT(fy_shm_layout_compute(&lay), 0, "layout computed");
    TAP_EQ_INT(fy_shm_attach(fd, 0, &lay), 0, "rank 0 creates the segment");
    TAP_EQ_INT(fy_cellq_attach(), 0, "cell queues found");
    const struct fy_cells *h = &fy_cells;
    recv_tail = fy_cellq_init(fy_cellq_recvq(0));
    for (int r = 0; r <= NPROD; r++) {
        free_tail[r] = fy_cellq_init(fy_cellq_freeq(r));
        for (uint32_t i = 0; i < h->ncells; i++)
            fy_cellq_push(fy_cellq_freeq(r),
                          fy_cells_base(r) + (uint64_t)i * h->cell_size);
    }
    TAP_OK(!fy_cellq_pop(fy_cellq_recvq(0), &recv_tail), "new queue is empty");

    pid_t pids[NPROD + 1];
    for (int p = 1; p <= NPROD; p++)
        if ((pids[p] = fork()) == 0)
            producer(p);

    uint64_t expect[NPROD + 1] = {0};
    uint64_t got = 0, bad_order = 0, bad_payload = 0, bad_src = 0;
    while (got < (uint64_t)NPROD * PER_PRODUCER) {
        uint64_t off = fy_cellq_pop(fy_cellq_recvq(0), &recv_tail);
        if (!off) {
            sched_yield();
            continue;
        }
        struct fy_cell *c = fy_shm_ptr(off);
        if (c->src < 1 || c->src > NPROD) {
            bad_src++;
            continue;
        }
        if (c->seq != expect[c->src])
            bad_order++;
        if (c->total != c->seq * 2654435761u)
            bad_payload++;
        expect[c->src] = c->seq + 1;
        fy_cellq_push(fy_cellq_freeq((int)c->src), off);
        got++;
    }
    TAP_EQ_INT(bad_src, 0, "every cell names a producer");
    TAP_EQ_INT(bad_order, 0, "cells of each producer arrive in order");
    TAP_EQ_INT(bad_payload, 0, "cell contents intact");
    for (int p = 1; p <= NPROD; p++) {
        int st;
        waitpid(pids[p], &st, 0);
        TAP_OK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
               "producer %d exited cleanly", p);
        TAP_EQ_INT(expect[p], PER_PRODUCER, "all cells of producer %d arrived",
                   p);
    }
    TAP_OK(!fy_cellq_pop(fy_cellq_recvq(0), &recv_tail),
           "queue empty at the end");

    /* Corrupted links: a bogus 'next' behind a queued cell (consumer), and
     * a bogus head (producer). Each runs in a child that must die with
     * status 1 and never touch the bogus address. */
    static const uint64_t bogus[] = {8, 1ull << 40, 4096 + 3};
    for (int which = 0; which < 2; which++) {
        for (size_t b = 0; b < sizeof(bogus) / sizeof(bogus[0]); b++) {
            pid_t kid = fork();
            if (kid == 0) {
                /* A fresh queue and two cells in every child: earlier
                 * children left their damage in the shared segment. */
                struct fy_cellq *q = fy_cellq_recvq(NPROD);
                uint64_t tail = fy_cellq_init(q);
                uint64_t a = fy_cells_base(0), c = a + h->cell_size;
                if (which == 0) {
                    fy_cellq_push(q, a);
                    fy_cellq_push(q, c);
                    atomic_store(&fy_qnode_at(a)->next, bogus[b]);
                    while (fy_cellq_pop(q, &tail))
                        ;
                } else {
                    atomic_store(&q->head, bogus[b]);
                    fy_cellq_push(q, a);
                }
                _exit(0); /* must not get here */
            }
            int st;
            waitpid(kid, &st, 0);
            TAP_OK(WIFEXITED(st) && WEXITSTATUS(st) == 1,
                   "%s link %#llx: fatal error (status %d)",
                   which ? "head" : "next", (unsigned long long)bogus[b],
                   WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        }
    }
    fy_shm_detach();
    return tap_done();
}
