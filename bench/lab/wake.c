/* SPDX-License-Identifier: MIT */
/* ferry-bench --wake: what it costs to hand the core to the rank that is
 * waited for, in each of the ways a waiting rank can wait - the facts
 * behind FERRY_WAIT=auto (p2p/p2p.c idle_step: spin with a core each;
 * yield, then sleep on the doorbell futex, when ranks outnumber cores)
 * and behind any design that would wake a helper (a progress thread) to
 * answer a peer. Two processes share one page; one waits for a flag the
 * other sets, and answers with a flag of its own:
 * - spin, other core: the waiter spins on the flag (a cache line crossing
 *   the cores each way);
 * - futex, other core idle / busy: the waiter sleeps (FUTEX_WAIT on the
 *   shared word, as the doorbell does); the setter stores the flag and
 *   calls FUTEX_WAKE, then spins until the answer. "busy": a third
 *   process spins on the sleeper's core, so the woken sleeper must
 *   preempt it, as a helper thread woken on a computing rank's core would;
 * - yield, one core: both processes on one core, each waiting with
 *   sched_yield between looks, so every hand-over is a switch to the
 *   other (ranks outnumbering cores);
 * - futex, one core: the same with both sleeping.
 * One-way time per hand-over: a round trip's half for the symmetric
 * rows, the setter's wait from its FUTEX_WAKE to the answer for the
 * futex rows across cores (the waker's own system call included). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lab.h"

struct wake_page {
    alignas(64) _Atomic uint32_t go;  /* setter -> waiter: round number */
    alignas(64) _Atomic uint32_t ack; /* waiter -> setter: round answered */
    alignas(64) _Atomic uint32_t stop;
};

enum wake_how { WK_SPIN, WK_YIELD, WK_FUTEX };

/* A hand-over that takes this long means the partner is gone. */
#define WAKE_TIMEOUT_NS (2ull * 1000 * 1000 * 1000)

/* Sleep while *w is v, at most 10 ms (so a waiter whose partner died
 * still looks at its deadline). */
static void wake_futex_wait(_Atomic uint32_t *w, uint32_t v)
{
    struct timespec ts = {0, 10 * 1000 * 1000};
    syscall(SYS_futex, w, FUTEX_WAIT, v, &ts, NULL, 0);
}

static void wake_futex_wake(_Atomic uint32_t *w)
{
    syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* Wait until *w reaches v, the way 'how' says; false once 'deadline'
 * (CLOCK_MONOTONIC ns, 0: none) has passed. */
static bool wake_wait(_Atomic uint32_t *w, uint32_t v, enum wake_how how,
                      uint64_t deadline)
{
    uint32_t now;
    unsigned n = 0;
    while ((now = atomic_load_explicit(w, memory_order_acquire)) != v) {
        if (how == WK_YIELD)
            sched_yield();
        else if (how == WK_FUTEX)
            wake_futex_wait(w, now);
        else
            fy_cpu_relax();
        if (deadline && (++n & 255) == 0 && lab_now_ns() > deadline)
            return false;
    }
    return true;
}

/* Set *w to v and, for a sleeper, wake it. */
static void wake_set(_Atomic uint32_t *w, uint32_t v, enum wake_how how)
{
    atomic_store_explicit(w, v, memory_order_release);
    if (how == WK_FUTEX)
        wake_futex_wake(w);
}

static int wake_pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof(set), &set);
}

/* One row: 'rounds' hand-overs, the waiter on cpu wcpu waiting by 'how',
 * the setter on scpu (waiting for the answer by 'how' too when
 * symmetric, else spinning), a spinner on wcpu when 'busy'. Fills
 * lat[rounds] with one-way times in us; returns 0, or -1 (errno). */
static int wake_row(struct wake_page *pg, int wcpu, int scpu, enum wake_how how,
                    bool symmetric, bool busy, int rounds, double *lat)
{
    atomic_store(&pg->go, 0);
    atomic_store(&pg->ack, 0);
    atomic_store(&pg->stop, 0);
    pid_t spinner = -1;
    if (busy) {
        spinner = fork();
        if (spinner < 0)
            return -1;
        if (spinner == 0) {
            wake_pin(wcpu);
            while (!atomic_load_explicit(&pg->stop, memory_order_relaxed))
                fy_cpu_relax();
            _exit(0);
        }
    }
    pid_t waiter = fork();
    if (waiter < 0) {
        if (spinner > 0) {
            atomic_store(&pg->stop, 1);
            waitpid(spinner, NULL, 0);
        }
        return -1;
    }
    if (waiter == 0) {
        wake_pin(wcpu);
        for (uint32_t r = 1; r <= (uint32_t)rounds + 1; r++) {
            if (!wake_wait(&pg->go, r, how, lab_now_ns() + WAKE_TIMEOUT_NS))
                _exit(1);
            wake_set(&pg->ack, r, symmetric ? how : WK_SPIN);
        }
        _exit(0);
    }
    int rc = wake_pin(scpu);
    /* Round 0 settles both processes on their cores; not counted. */
    for (uint32_t r = 1; r <= (uint32_t)rounds + 1 && rc == 0; r++) {
        /* Across cores, a sleeper must be asleep before it is woken:
         * give it time to get there (its wake-up is what is timed). */
        if (!symmetric) {
            uint64_t until = lab_now_ns() + 50000;
            while (lab_now_ns() < until)
                fy_cpu_relax();
        }
        uint64_t t0 = lab_now_ns();
        wake_set(&pg->go, r, how);
        if (!wake_wait(&pg->ack, r, symmetric ? how : WK_SPIN,
                       t0 + WAKE_TIMEOUT_NS)) {
            errno = ETIMEDOUT;
            rc = -1;
            break;
        }
        uint64_t t1 = lab_now_ns();
        if (r > 1)
            lat[r - 2] = (double)(t1 - t0) / (symmetric ? 2e3 : 1e3);
    }
    int err = errno;
    if (rc != 0)
        kill(waiter, SIGKILL); /* it would wait out its timeout */
    waitpid(waiter, NULL, 0);
    if (spinner > 0) {
        atomic_store(&pg->stop, 1);
        waitpid(spinner, NULL, 0);
    }
    errno = err;
    return rc;
}

int lab_wake_run(const struct lab_opts *o, FILE *out)
{
    struct wake_page *pg = mmap(NULL, sizeof(*pg), PROT_READ | PROT_WRITE,
                                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (pg == MAP_FAILED) {
        fprintf(stderr, "ferry-bench: no shared page for --wake: %s\n",
                strerror(errno));
        return 1;
    }
    /* Two cores of those we may run on: the first two of our mask. */
    cpu_set_t mask;
    int cpus[2] = {-1, -1}, ncpu = 0;
    if (sched_getaffinity(0, sizeof(mask), &mask) == 0)
        for (int c = 0; c < CPU_SETSIZE && ncpu < 2; c++)
            if (CPU_ISSET(c, &mask))
                cpus[ncpu++] = c;
    if (ncpu == 0) {
        fprintf(stderr, "ferry-bench: no CPU to run --wake on\n");
        munmap(pg, sizeof(*pg));
        return 1;
    }
    int rounds = o->quick ? 500 : 4000;
    static const struct {
        const char *name;
        enum wake_how how;
        bool cross, symmetric, busy;
    } rows[] = {
        {"spin, other core", WK_SPIN, true, true, false},
        {"futex, other core idle", WK_FUTEX, true, false, false},
        {"futex, other core busy", WK_FUTEX, true, false, true},
        {"yield, one core", WK_YIELD, false, true, false},
        {"futex, one core", WK_FUTEX, false, true, false},
    };
    double *lat = malloc(sizeof(*lat) * (size_t)rounds);
    if (!lat) {
        munmap(pg, sizeof(*pg));
        return 1;
    }
    fprintf(out,
            "Hand-over of the core to a waiting process, one way, in us (%d "
            "hand-overs a row;\nmedian, 90th and 99th percentile; cores %d "
            "and %d). spin/yield/futex: how the waiter\nwaits (Ferry: spin "
            "with a core per rank, yield then sleep on its doorbell's futex\n"
            "when ranks outnumber cores); futex rows across cores count the "
            "waker's FUTEX_WAKE\nup to the answer; 'busy': the sleeper's core "
            "runs another process it must preempt.\n\n",
            rounds, cpus[0], ncpu > 1 ? cpus[1] : cpus[0]);
    fprintf(out, "| hand-over | median | p90 | p99 |\n|---|---:|---:|---:|\n");
    int rc = 0;
    for (size_t i = 0; i < FY_ARRAY_LEN(rows); i++) {
        if (rows[i].cross && ncpu < 2) {
            fprintf(out, "| %s | - | - | not here: one CPU |\n", rows[i].name);
            continue;
        }
        int wcpu = cpus[0], scpu = rows[i].cross ? cpus[1] : cpus[0];
        if (wake_row(pg, wcpu, scpu, rows[i].how, rows[i].symmetric,
                     rows[i].busy, rounds, lat) != 0) {
            fprintf(out, "| %s | - | - | failed: %s |\n", rows[i].name,
                    strerror(errno));
            rc = 1;
            continue;
        }
        lab_sort(lat, rounds);
        fprintf(out, "| %s | %.2f | %.2f | %.2f |\n", rows[i].name,
                lat[rounds / 2], lat[rounds * 9 / 10], lat[rounds * 99 / 100]);
        fflush(out);
    }
    sched_setaffinity(0, sizeof(mask), &mask); /* wake_row pinned us */
    free(lat);
    munmap(pg, sizeof(*pg));
    return rc;
}

char *lab_wake_section;

void lab_exp_wake(const struct lab_opts *o)
{
    lab_proto_unpin();
    lab_wake_section =
        lab_capture(lab_wake_run, o, "## Handing the core over\n\n");
    lab_proto_repin();
}
