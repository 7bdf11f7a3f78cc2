/* SPDX-License-Identifier: MIT */
/* Seed 001's early and late receiver tests (section 5.3, Fig. 5): a
 * ping-pong between ranks 0 and 1 in which each side computes (a
 * calibrated busy loop) before it communicates, with the computations
 * chosen so that the receive is always posted before the message is sent
 * ("early") or always after it arrived ("late"). Plain standard MPI, so the
 * protocol under test is whatever the library picks (FERRY_PROTO, ...).
 *
 *   ping (rank 0): barrier; t0; compute x; send; compute y; recv; t = now-t0
 *   pong (rank 1): barrier; compute y; recv; compute x; send
 *
 * The seed's pp_send returns once the pushed part has left (its kernel
 * serves the pull): the send is MPI_Isend, completed after the receive
 * (--blocking: MPI_Send, so a sender whose message is not wholly pushed
 * waits for a late receiver and its lateness is in the figure).
 *
 * comm = t - the computation on the critical path (measured, per iteration):
 * early: ping's x + pong's x; late: pong's y + pong's x.
 *
 * --setting LABEL:NAME=VALUE;... (repeatable) interleaves protocol settings
 * inside the one job, in blocks of --block B iterations (default 16): a block
 * runs under one setting, written before it through MPI_T control variables
 * (the library must let those be written at run time: Ferry's FERRY_PROTO,
 * FERRY_BTP, FERRY_RECV_WRITE, FERRY_RECV_WRITE_MIN, FERRY_NET_PUSH_MAX), so a
 * machine whose speed drifts from second to second hits every setting alike;
 * a setting names only what differs from the values in force at the start.
 * Each row then starts with its label. The first two iterations of a block
 * are not timed: they inherit the caches of another setting's iterations (a
 * receive buffer that the other protocol left in the other core's cache,
 * say), and a program runs one protocol, not a mix - measured so, each
 * setting inherits its own (bench/README.md, "The laboratory's
 * interleaving": blocks of 1 and 4 iterations still favoured one protocol
 * by 10-20 %). --block 1 times every iteration, each after another
 * setting's. */
#define _GNU_SOURCE /* strtok_r */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "bench_common.h"

#define EL_TAG 11
#define EL_WARMUP 2 /* untimed, data-checked iterations per size */
#define EL_MAX_ITERS 1000
#define EL_MAX_SET 16 /* --setting's */
#define EL_MAX_VARS 8 /* variables one setting writes */
#define EL_BLOCK_DEFAULT 16
/* Untimed iterations at the start of a block (fewer in a shorter one). */
#define EL_SETTLE 2
#define EL_MAX_BLOCK 64

enum el_mode { EL_EARLY, EL_LATE };
static MPI_Comm el_comm;                /* ranks 0 and 1 */
static int el_blocking;                 /* MPI_Send rather than MPI_Isend */
static int el_block = EL_BLOCK_DEFAULT; /* --block */
static int *el_rec_set; /* the setting of each timed record (run_size) */

/* --setting: labels and what each writes; el_nset 0 without any. */
struct el_var {
    MPI_T_cvar_handle h;
    int is_str;
    char str[32];  /* the value, a string cvar */
    long long num; /* or an integer one (int for MPI_INT) */
    int is_int;
};
struct el_setting {
    char label[48];
    const char *spec;
    int nvar;
    struct el_var var[EL_MAX_VARS];
};
static struct el_setting el_set[EL_MAX_SET];
static int el_nset;
/* Every variable any setting names, with its value at the start: each
 * setting writes them all back before its own (a setting is "the start,
 * except..."). */
static struct el_var el_base[EL_MAX_SET * EL_MAX_VARS];
static int el_base_idx[EL_MAX_SET * EL_MAX_VARS]; /* their cvar indices */
static int el_nbase;

/* The timed send: blocking, or started here and completed by el_wait. */
static void el_send(const void *buf, size_t size, int dest, MPI_Request *rq)
{
    if (el_blocking) {
        MPI_Send(buf, (int)size, MPI_BYTE, dest, EL_TAG, el_comm);
        *rq = MPI_REQUEST_NULL;
    } else {
        MPI_Isend(buf, (int)size, MPI_BYTE, dest, EL_TAG, el_comm, rq);
    }
}
static const char *const mode_name[] = {"early", "late"};

struct el_opts {
    int modes;   /* bit 0: early, bit 1: late */
    int iters;   /* 0: by size and --quick */
    double x_us; /* < 0: chosen per size */
    double y_us;
    int quick, test;
    int nsizes;
    size_t sizes[BENCH_MAX_SIZES];
};

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* ---- the computation: a dependent multiply-add chain the compiler may
 * neither vectorise nor remove, calibrated once per rank ---- */

static volatile uint64_t el_sink;
static double el_ns_per_step = 1.0;

static void spin_steps(uint64_t n)
{
    uint64_t a = n | 1;
    for (uint64_t i = 0; i < n; i++) {
        a = a * 6364136223846793005ull + 1442695040888963407ull;
        __asm__ __volatile__("" : "+r"(a));
    }
    el_sink = a;
}

static void calibrate(void)
{
    const uint64_t n = 200000;
    double best = 1e30;
    spin_steps(n); /* wake the core up */
    for (int i = 0; i < 7; i++) {
        double t0 = now_us();
        spin_steps(n);
        double dt = now_us() - t0;
        if (dt < best)
            best = dt;
    }
    el_ns_per_step = best * 1e3 / (double)n;
    if (el_ns_per_step <= 0)
        el_ns_per_step = 1.0;
}

/* Compute for about us microseconds; returns the time it actually took
 * (longer when the core was taken away meanwhile). */
static double compute(double us)
{
    double t0 = now_us();
    if (us > 0)
        spin_steps((uint64_t)(us * 1e3 / el_ns_per_step));
    return now_us() - t0;
}

/* ---- data ---- */

static void fill(unsigned char *p, size_t n, unsigned salt)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 7 + (i >> 11) + salt * 29 + 3);
}

/* Index of the first wrong byte, or n. */
static size_t check(const unsigned char *p, size_t n, unsigned salt)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(i * 7 + (i >> 11) + salt * 29 + 3))
            return i;
    return n;
}

/* ---- options ---- */

static void el_usage(FILE *f)
{
    fprintf(f,
            "usage: bench_earlylate [--mode early|late|both] [-m MAX] "
            "[-s SIZES]\n"
            "                       [-i ITERS] [-x US] [-y US] [--quick] "
            "[--test]\n"
            "Seed 001's early/late receiver ping-pong (section 5.3, Fig. 5) "
            "on ranks 0, 1.\n"
            "  --mode M   early (receive posted before the send), late "
            "(posted after\n"
            "             the message arrived) or both (default)\n"
            "  -m MAX     sizes 1, 2, 4, ... MAX (default 4M; K/M suffixes)\n"
            "  -s SIZES   only these sizes (comma separated)\n"
            "  -i ITERS   timed iterations per size and setting (default 200 "
            "up to 64 KiB\n"
            "             - 400 with --setting -, 100 up to 1 MiB, 40 above; "
            "--quick 30/15/6)\n"
            "  -x US, -y US  fixed computations (default per size: early "
            "x=50 y=10;\n"
            "             late x=5, y = x + 20 + 3 x the size's one-way "
            "time)\n"
            "  --quick    fewer sizes and iterations\n"
            "  --test     odd sizes around the protocol limits, 4 iterations "
            "each\n"
            "  --blocking MPI_Send instead of MPI_Isend + MPI_Wait after the "
            "receive\n"
            "  --setting LABEL:NAME=VALUE;...  interleave this protocol "
            "setting with the\n"
            "             others given (repeatable, up to 16), a block of "
            "iterations each\n"
            "             in turn, written through MPI_T control variables; "
            "rows then\n"
            "             start with the label (\"auto:\": the values at "
            "start)\n"
            "  --block B  iterations per block of one setting (default 16); "
            "the first two\n"
            "             of a block are not timed (they inherit another "
            "setting's caches);\n"
            "             1: every iteration timed, each after another "
            "setting's\n"
            "Every size is data-checked (the warm-up and the last timed "
            "iteration, both\n"
            "directions); a wrong byte fails the run. Output: '#' comments, a "
            "CSV header,\n"
            "one CSV row per mode and size, then 'earlylate: OK (2 ranks)'.\n");
}

static int el_parse(int argc, char **argv, int loud, struct el_opts *o)
{
    const char *list = NULL;
    size_t max = BENCH_MAX_SIZE;
    memset(o, 0, sizeof(*o));
    o->modes = 3;
    o->x_us = o->y_us = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return 1;
        if (!strcmp(a, "--quick")) {
            o->quick = 1;
            continue;
        }
        if (!strcmp(a, "--test")) {
            o->test = 1;
            continue;
        }
        if (!strcmp(a, "--blocking")) {
            el_blocking = 1;
            continue;
        }
        if (!v) {
            bench_complain(loud, "bench_earlylate: %s needs a value\n", a);
            return -1;
        }
        int bad = 0;
        if (!strcmp(a, "--setting")) {
            const char *colon = strchr(v, ':');
            bad = !colon || colon == v || colon - v >= 48 ||
                  el_nset == EL_MAX_SET;
            if (!bad) {
                struct el_setting *st = &el_set[el_nset++];
                memcpy(st->label, v, (size_t)(colon - v));
                st->label[colon - v] = '\0';
                st->spec = colon + 1;
            }
        } else if (!strcmp(a, "--mode")) {
            if (!strcmp(v, "early"))
                o->modes = 1;
            else if (!strcmp(v, "late"))
                o->modes = 2;
            else if (!strcmp(v, "both"))
                o->modes = 3;
            else
                bad = 1;
        } else if (!strcmp(a, "-m")) {
            bad = bench_parse_size(v, &max) || max == 0;
        } else if (!strcmp(a, "-s")) {
            list = v;
        } else if (!strcmp(a, "--block")) {
            bad = bench_parse_int(v, &el_block) || el_block < 1 ||
                  el_block > EL_MAX_BLOCK;
        } else if (!strcmp(a, "-i")) {
            bad = bench_parse_int(v, &o->iters) || o->iters > EL_MAX_ITERS;
        } else if (!strcmp(a, "-x") || !strcmp(a, "-y")) {
            char *end;
            double d = strtod(v, &end);
            bad = *end || !(d >= 0) || d > 1e6;
            if (a[1] == 'x')
                o->x_us = d;
            else
                o->y_us = d;
        } else {
            bench_complain(loud, "bench_earlylate: unknown option %s\n", a);
            return -1;
        }
        if (bad) {
            bench_complain(loud, "bench_earlylate: bad value '%s' for %s\n", v,
                           a);
            return -1;
        }
        i++;
    }
    if (list) {
        o->nsizes = bench_parse_size_list(list, o->sizes, BENCH_MAX_SIZES);
        if (o->nsizes < 0) {
            bench_complain(loud, "bench_earlylate: bad size list '%s'\n", list);
            return -1;
        }
        for (int k = 0; k < o->nsizes; k++)
            if (o->sizes[k] == 0) {
                bench_complain(loud, "bench_earlylate: sizes start at 1\n");
                return -1;
            }
    } else if (o->test) {
        /* Around the eager limit (4 KiB), the default BTP (16 KiB) and a
         * cell; odd so a protocol's chunking has a remainder. */
        static const size_t t[] = {1, 4097, 20000, 65549, 1048583};
        o->nsizes = (int)(sizeof(t) / sizeof(t[0]));
        memcpy(o->sizes, t, sizeof(t));
    } else if (o->quick) {
        static const size_t q[] = {1,     64,     1024,    4096,   16384,
                                   65536, 262144, 1048576, 4194304};
        for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++)
            if (q[k] <= max)
                o->sizes[o->nsizes++] = q[k];
    } else {
        for (size_t s = 1; s <= max && o->nsizes < BENCH_MAX_SIZES; s *= 2)
            o->sizes[o->nsizes++] = s;
    }
    return 0;
}

static int iters_for(const struct el_opts *o, size_t size)
{
    if (o->iters)
        return o->iters;
    if (o->test)
        return 4;
    /* Interleaved settings are told apart by a few per cent where they
     * run the same code: twice the samples there (cheap, small sizes). */
    if (size <= 65536)
        return o->quick ? 30 : el_nset ? 400 : 200;
    if (size <= (1u << 20))
        return o->quick ? 15 : 100;
    return o->quick ? 6 : 40;
}

/* ---- one size ---- */

struct el_pong_rec {
    double post;  /* absolute time pong posted its receive */
    double cy;    /* pong's y, as it took */
    double cx;    /* pong's x, as it took */
    double check; /* bytes of the received message that were right (or -1) */
};

/* A plain ping-pong (no computation): this size's one-way time, to size
 * the late receiver's y. Both ranks return it. */
static double oneway_us(int rank, unsigned char *sbuf, unsigned char *rbuf,
                        size_t size)
{
    double v[5];
    for (int i = 0; i < 6; i++) {
        MPI_Barrier(el_comm);
        double t0 = now_us();
        if (rank == 0) {
            MPI_Send(sbuf, (int)size, MPI_BYTE, 1, EL_TAG, el_comm);
            MPI_Recv(rbuf, (int)size, MPI_BYTE, 1, EL_TAG, el_comm,
                     MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, (int)size, MPI_BYTE, 0, EL_TAG, el_comm,
                     MPI_STATUS_IGNORE);
            MPI_Send(sbuf, (int)size, MPI_BYTE, 0, EL_TAG, el_comm);
        }
        if (i > 0)
            v[i - 1] = (now_us() - t0) / 2;
    }
    double m = bench_median(v, 5);
    MPI_Bcast(&m, 1, MPI_DOUBLE, 0, el_comm);
    return m;
}

struct el_row {
    double t, comm, comm_min, comp, order_ok;
    long bad_at; /* first wrong byte, or -1 */
    int bad_rank;
};

/* ---- --setting: protocol settings written through MPI_T ---- */

static int el_var_open(const char *name, struct el_var *v, int loud)
{
    int idx, count, scope;
    MPI_Datatype dt;
    if (MPI_T_cvar_get_index(name, &idx) != MPI_SUCCESS) {
        bench_complain(loud, "bench_earlylate: no control variable %s\n", name);
        return -1;
    }
    if (MPI_T_cvar_get_info(idx, NULL, NULL, NULL, &dt, NULL, NULL, NULL, NULL,
                            &scope) != MPI_SUCCESS ||
        scope == MPI_T_SCOPE_CONSTANT || scope == MPI_T_SCOPE_READONLY ||
        (dt != MPI_CHAR && dt != MPI_INT && dt != MPI_LONG_LONG)) {
        bench_complain(loud,
                       "bench_earlylate: %s cannot be written while the "
                       "program runs\n",
                       name);
        return -1;
    }
    if (MPI_T_cvar_handle_alloc(idx, NULL, &v->h, &count) != MPI_SUCCESS ||
        (dt == MPI_CHAR && count > (int)sizeof(v->str))) {
        bench_complain(loud, "bench_earlylate: cannot use %s\n", name);
        return -1;
    }
    v->is_str = dt == MPI_CHAR;
    v->is_int = dt == MPI_INT;
    return 0;
}

static int el_var_read(struct el_var *v)
{
    if (v->is_str)
        return MPI_T_cvar_read(v->h, v->str);
    if (v->is_int) {
        int i = 0;
        int rc = MPI_T_cvar_read(v->h, &i);
        v->num = i;
        return rc;
    }
    return MPI_T_cvar_read(v->h, &v->num);
}

static int el_var_write(const struct el_var *v)
{
    if (v->is_str)
        return MPI_T_cvar_write(v->h, v->str);
    if (v->is_int) {
        int i = (int)v->num;
        return MPI_T_cvar_write(v->h, &i);
    }
    return MPI_T_cvar_write(v->h, &v->num);
}

/* Open every setting's variables and remember the values at the start. */
static int el_settings_open(int loud)
{
    int provided;
    if (!el_nset)
        return 0;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        bench_complain(loud, "bench_earlylate: MPI_T_init_thread failed\n");
        return -1;
    }
    for (int k = 0; k < el_nset; k++) {
        struct el_setting *st = &el_set[k];
        char spec[512];
        if (strlen(st->spec) >= sizeof(spec)) {
            bench_complain(loud, "bench_earlylate: setting '%s' too long\n",
                           st->label);
            return -1;
        }
        strcpy(spec, st->spec);
        for (char *save = NULL, *tok = strtok_r(spec, ";", &save); tok;
             tok = strtok_r(NULL, ";", &save)) {
            char *eq = strchr(tok, '=');
            if (!eq || st->nvar == EL_MAX_VARS) {
                bench_complain(loud, "bench_earlylate: bad setting '%s'\n",
                               tok);
                return -1;
            }
            *eq = '\0';
            struct el_var *v = &st->var[st->nvar++];
            if (el_var_open(tok, v, loud))
                return -1;
            size_t n = 0;
            if (v->is_str ? strlen(eq + 1) >= sizeof(v->str)
                          : bench_parse_size(eq + 1, &n) != 0) {
                bench_complain(loud, "bench_earlylate: bad value for %s\n",
                               tok);
                return -1;
            }
            if (v->is_str)
                strcpy(v->str, eq + 1);
            v->num = (long long)n;
            int idx = -1, seen = 0;
            MPI_T_cvar_get_index(tok, &idx);
            for (int i = 0; i < el_nbase; i++)
                seen |= el_base_idx[i] == idx;
            if (!seen) {
                /* A handle of its own holds the value at the start. */
                if (el_var_open(tok, &el_base[el_nbase], loud) ||
                    el_var_read(&el_base[el_nbase]) != MPI_SUCCESS)
                    return -1;
                el_base_idx[el_nbase++] = idx;
            }
        }
    }
    return 0;
}

/* Setting k in force: the start's values, then its own. */
static void el_apply(int k)
{
    int rc = MPI_SUCCESS;
    for (int b = 0; b < el_nbase && rc == MPI_SUCCESS; b++)
        rc = el_var_write(&el_base[b]);
    for (int i = 0; i < el_set[k].nvar && rc == MPI_SUCCESS; i++)
        rc = el_var_write(&el_set[k].var[i]);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr,
                "bench_earlylate: setting '%s' could not be written (MPI_T "
                "error %d)\n",
                el_set[k].label, rc);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* Iterations go round the settings (one setting: el_nset 0, all alike). */
static int el_rounds(void)
{
    return el_nset ? el_nset : 1;
}

static int el_gcd(int a, int b)
{
    return b ? el_gcd(b, a % b) : a;
}

/* Iterations per block of one setting: --block with several settings
 * (with one there is nothing to interleave). */
static int el_block_len(void)
{
    return el_nset > 1 ? el_block : 1;
}

/* The setting of block b: each round of n blocks runs every setting once,
 * in an order that steps by a stride prime to n and changes from round to
 * round, so no setting always follows the same one (what an iteration
 * leaves in the caches - a written receive buffer, pinned pages - falls on
 * different settings in turn). */
static int el_set_of(int b)
{
    int n = el_rounds(), round = b / n, pos = b % n;
    int strides[EL_MAX_SET], ns = 0;
    for (int k = 1; k < n || (n == 1 && k == 1); k++)
        if (el_gcd(k, n) == 1)
            strides[ns++] = k;
    return (pos * strides[round % ns] + round) % n;
}

static void run_size(int rank, enum el_mode mode, size_t size, int iters,
                     double x, double y, double ow, unsigned char *sbuf,
                     unsigned char *rbuf, struct el_pong_rec *rec,
                     double *t_ping, double *send_at, double *cx_ping,
                     struct el_row *rows)
{
    int ns = el_rounds(), B = el_block_len();
    /* Timed iterations per block: all but the first EL_SETTLE (they
     * settle the caches after another setting's block), or the one of
     * --block 1. */
    int settle = B > EL_SETTLE ? EL_SETTLE : B - 1;
    int per = B - settle;
    int warm = (B > 1 ? 1 : EL_WARMUP) * ns; /* untimed blocks first */
    int nblocks = warm + (iters + per - 1) / per * ns;
    int got[EL_MAX_SET] = {0}; /* timed iterations so far, by setting */
    int nrec = 0;              /* timed records so far */
    long bad = -1;
    int bad_set = -1;
    for (int it = 0; it < nblocks * B; it++) {
        int blk = it / B, pos = it % B;
        int set = el_set_of(blk);
        int timed = blk >= warm && pos >= settle && got[set] < iters;
        /* Data is checked in the warm-up and in each setting's last
         * block's last iteration, each with its own pattern so a stale
         * buffer cannot pass; not in the settling ones, whose writing of
         * both buffers would change what the next one inherits. */
        int verify = blk < warm || (blk >= nblocks - ns && pos == B - 1);
        unsigned salt = (unsigned)(it * 2 + rank + mode * 7 + size % 251);
        if (el_nset && pos == 0)
            el_apply(set);
        int r = timed ? nrec++ : -1; /* this iteration's record */
        if (timed) {
            got[set]++;
            el_rec_set[r] = set;
        }
        if (verify) {
            fill(sbuf, size, salt);
            memset(rbuf, 0, size);
        }
        MPI_Barrier(el_comm);
        if (rank == 0) {
            double t0 = now_us();
            double cx = compute(x);
            double at = now_us();
            MPI_Request rq;
            el_send(sbuf, size, 1, &rq);
            compute(y);
            MPI_Recv(rbuf, (int)size, MPI_BYTE, 1, EL_TAG, el_comm,
                     MPI_STATUS_IGNORE);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
            double t = now_us() - t0;
            if (timed) {
                t_ping[r] = t;
                send_at[r] = at;
                cx_ping[r] = cx;
            }
            if (verify && bad < 0) {
                /* pong sent its pattern with its own salt (rank 1) */
                size_t k = check(rbuf, size, salt + 1);
                if (k != size) {
                    bad = (long)k;
                    bad_set = set;
                }
            }
        } else {
            double cy = compute(y);
            double post = now_us();
            MPI_Recv(rbuf, (int)size, MPI_BYTE, 0, EL_TAG, el_comm,
                     MPI_STATUS_IGNORE);
            double cx = compute(x);
            MPI_Request rq;
            el_send(sbuf, size, 0, &rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
            if (timed) {
                rec[r].post = post;
                rec[r].cy = cy;
                rec[r].cx = cx;
            }
            if (verify && bad < 0) {
                size_t k = check(rbuf, size, salt - 1);
                if (k != size) {
                    bad = (long)k;
                    bad_set = set;
                }
            }
        }
    }
    /* Pong's records and its data verdict go to ping (untimed). */
    long pong_bad[2] = {bad, bad_set};
    int n = iters * ns;
    if (rank == 1) {
        MPI_Send(rec, (int)(n * sizeof(*rec)), MPI_BYTE, 0, EL_TAG + 1,
                 el_comm);
        MPI_Send(pong_bad, 2, MPI_LONG, 0, EL_TAG + 2, el_comm);
        return;
    }
    MPI_Recv(rec, (int)(n * sizeof(*rec)), MPI_BYTE, 1, EL_TAG + 1, el_comm,
             MPI_STATUS_IGNORE);
    MPI_Recv(pong_bad, 2, MPI_LONG, 1, EL_TAG + 2, el_comm, MPI_STATUS_IGNORE);
    double *comm = malloc(sizeof(double) * (size_t)iters * 3);
    double *comp = comm + iters, *t = comm + 2 * iters;
    for (int set = 0; set < ns; set++) {
        struct el_row *row = &rows[set];
        row->bad_at = -1;
        row->bad_rank = -1;
        if (pong_bad[0] >= 0 && pong_bad[1] == set) {
            row->bad_at = pong_bad[0];
            row->bad_rank = 1;
        } else if (bad >= 0 && bad_set == set) {
            row->bad_at = bad;
            row->bad_rank = 0;
        }
        int ok = 0;
        for (int j = 0, i = 0; i < n; i++) {
            if (el_rec_set[i] != set)
                continue;
            comp[j] = mode == EL_EARLY ? cx_ping[i] + rec[i].cx
                                       : rec[i].cy + rec[i].cx;
            comm[j] = t_ping[i] - comp[j];
            t[j] = t_ping[i];
            /* Both ranks share CLOCK_MONOTONIC (one node). Early: pong was
             * waiting before ping started sending. Late: pong arrived at
             * least a whole one-way transfer time after ping started. */
            if (mode == EL_EARLY ? rec[i].post < send_at[i]
                                 : rec[i].post >= send_at[i] + ow)
                ok++;
            j++;
        }
        row->order_ok = (double)ok / iters;
        row->t = bench_median(t, iters);
        row->comp = bench_median(comp, iters);
        row->comm = bench_median(comm, iters);
        row->comm_min = comm[0]; /* sorted by bench_median */
    }
    free(comm);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    struct el_opts o;
    int prc = el_parse(argc, argv, rank == 0, &o);
    if (prc != 0 || nranks < 2) {
        if (prc == 1 && rank == 0)
            el_usage(stdout);
        else if (prc == 0 && rank == 0)
            fprintf(stderr, "bench_earlylate: needs 2 ranks\n");
        else if (rank == 0)
            el_usage(stderr);
        MPI_Finalize();
        return prc == 1 ? 0 : 2;
    }
    /* Ranks beyond 1 wait in bench_park; the barriers are the pair's. */
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank,
                   &el_comm);
    if (rank >= 2) {
        bench_park();
        MPI_Finalize();
        return 0;
    }
    /* Both ranks read the same --setting's: an error is both ranks'. */
    if (el_settings_open(rank == 0)) {
        if (rank == 0)
            bench_unpark_all(nranks);
        MPI_Comm_free(&el_comm);
        MPI_Finalize();
        return 2;
    }
    size_t max = 1;
    for (int k = 0; k < o.nsizes; k++)
        if (o.sizes[k] > max)
            max = o.sizes[k];
    unsigned char *sbuf = bench_alloc(max, 0);
    unsigned char *rbuf = bench_alloc(max, 0);
    int maxit = EL_MAX_ITERS * el_rounds();
    struct el_pong_rec *rec = calloc((size_t)maxit, sizeof(*rec));
    double *t_ping = calloc((size_t)maxit * 3, sizeof(double));
    el_rec_set = calloc((size_t)maxit, sizeof(int));
    if (!sbuf || !rbuf || !rec || !t_ping || !el_rec_set) {
        fprintf(stderr, "bench_earlylate: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double *send_at = t_ping + maxit, *cx_ping = t_ping + 2 * maxit;
    calibrate();

    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        bench_lib_version(lib);
        printf("# bench_earlylate (seed 001 sec. 5.3), %d ranks, %s\n", nranks,
               lib);
        static const char *const vars[] = {
            "FERRY_PROTO",     "FERRY_BTP",        "FERRY_BTP1",
            "FERRY_PUSH_BUF",  "FERRY_RECV_WRITE", "FERRY_RECV_WRITE_MIN",
            "FERRY_EAGER_MAX", "FERRY_XFER",       "FERRY_TUNING"};
        printf("# env");
        for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
            const char *v = getenv(vars[i]);
            if (v)
                printf(" %s=%s", vars[i], v);
        }
        printf("\n# compute loop: %.3f ns/step; times in us; comm_us = t_us "
               "- compute on the critical path (early: ping x + pong x; "
               "late: pong y + pong x), medians over iterations; order_ok: "
               "share of iterations with the intended order\n",
               el_ns_per_step);
        if (el_nset)
            printf("# settings interleaved by blocks of %d iterations (%d "
                   "untimed first):",
                   el_block_len(),
                   el_block_len() > EL_SETTLE ? EL_SETTLE : el_block_len() - 1);
        for (int k = 0; k < el_nset; k++)
            printf(" [%s] %s", el_set[k].label,
                   *el_set[k].spec ? el_set[k].spec : "(as at start)");
        if (el_nset)
            printf("\n");
        printf("%smode,size,iters,t_us,comm_us,comm_min_us,compute_us,x_us,"
               "y_us,oneway_us,order_ok,verified\n",
               el_nset ? "setting," : "");
        fflush(stdout);
    }
    int failed = 0;
    for (int m = 0; m < 2 && !failed; m++) {
        if (!(o.modes & (1 << m)))
            continue;
        for (int k = 0; k < o.nsizes && !failed; k++) {
            size_t size = o.sizes[k];
            int iters = iters_for(&o, size);
            /* The slowest setting's one-way time: a late receiver must be
             * late under each. */
            double ow = 0;
            for (int j = 0; j < el_rounds(); j++) {
                if (el_nset)
                    el_apply(j);
                double o1 = oneway_us(rank, sbuf, rbuf, size);
                ow = o1 > ow ? o1 : ow;
            }
            double x, y;
            if (m == EL_EARLY) {
                x = o.x_us >= 0 ? o.x_us : 50;
                y = o.y_us >= 0 ? o.y_us : 10;
            } else {
                x = o.x_us >= 0 ? o.x_us : 5;
                y = o.y_us >= 0 ? o.y_us : x + 20 + 3 * ow;
            }
            struct el_row rows[EL_MAX_SET];
            memset(rows, 0, sizeof(rows));
            run_size(rank, (enum el_mode)m, size, iters, x, y, ow, sbuf, rbuf,
                     rec, t_ping, send_at, cx_ping, rows);
            for (int j = 0; rank == 0 && j < el_rounds(); j++) {
                const struct el_row *row = &rows[j];
                if (el_nset)
                    printf("%s,", el_set[j].label);
                printf("%s,%zu,%d,%.3f,%.3f,%.3f,%.3f,%.1f,%.1f,%.3f,%.2f,%d\n",
                       mode_name[m], size, iters, row->t, row->comm,
                       row->comm_min, row->comp, x, y, ow, row->order_ok,
                       row->bad_at < 0);
                fflush(stdout);
                if (row->bad_at >= 0) {
                    fprintf(stderr,
                            "bench_earlylate: %s, %zu bytes%s%s: rank %d "
                            "received a wrong byte at offset %ld\n",
                            mode_name[m], size, el_nset ? ", setting " : "",
                            el_nset ? el_set[j].label : "", row->bad_rank,
                            row->bad_at);
                    failed = 1;
                }
            }
            MPI_Bcast(&failed, 1, MPI_INT, 0, el_comm);
        }
    }
    if (rank == 0 && !failed)
        printf("earlylate: OK (%d ranks)\n", nranks);
    if (rank == 0)
        bench_unpark_all(nranks);
    free(sbuf);
    free(rbuf);
    free(rec);
    free(t_ping);
    free(el_rec_set);
    MPI_Comm_free(&el_comm);
    MPI_Finalize();
    return failed ? 1 : 0;
}
