/* SPDX-License-Identifier: MIT */
/* ferry-bench --coll: the library's own collectives (bench_coll under
 * Ferry's mpiexec) at 2 and 4 ranks over sizes, once per algorithm
 * setting, and the crossovers between the node-level algorithms:
 * - broadcast through the root's cells vs single copy from its buffer
 *   (FERRY_COLL_CMA_MIN, tuning key coll_cma_min);
 * - allreduce combining the whole vector on every member vs a slice per
 *   member (FERRY_COLL_SLICE_MIN, tuning key coll_slice_min);
 * - allreduce among more than two ranks through the cells vs each member
 *   reading its slice of the others' buffers (FERRY_COLL_DIRECT_MIN,
 *   tuning key coll_direct_min; the same threshold serves Reduce), at 3
 *   and 4 ranks;
 * each against the point-to-point algorithms (FERRY_COLL=p2p), which the
 * table shows but no key selects. Repeats are the outer loop, so a slow
 * spell of the machine hits every setting alike; the figure is the median
 * of the repeats of the slowest rank's time per call.
 *
 * The crossover written is the threshold t (one of the measured sizes, or
 * "never") that minimises, summed over both rank counts and every size,
 * the time of the algorithm t selects relative to the better of the two
 * at that point: the library has one threshold for every rank count. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab.h"
#include "util/tuning.h"

#define COLL_SETS 3 /* p2p, below the threshold, from it */
#define COLL_NP 2   /* rank counts */
#define COLL_SIZES 12
#define COLL_REPS 7
#define COLL_NEVER FY_TUNING_XFER_MAX_BYTES

struct coll_exp {
    const char *op;   /* bench_coll --op */
    const char *key;  /* tuning key */
    int nps[COLL_NP]; /* rank counts */
    const char *var;  /* its FERRY_* variable */
    const char *label[COLL_SETS];
    const char *env[COLL_SETS];
    size_t sizes[COLL_SIZES];
    int nsizes;
    size_t quick_sizes[COLL_SIZES];
    int nquick;
    /* results */
    double rep[COLL_SETS][COLL_NP][COLL_SIZES][COLL_REPS];
    double us[COLL_SETS][COLL_NP][COLL_SIZES]; /* medians; < 0: none */
    uint64_t chosen;                           /* COLL_NEVER: never */
    int chosen_idx;                            /* its index, or nsizes */
    double cost[COLL_SIZES + 1];
};

static struct coll_exp exps[] = {
    {.op = "bcast",
     .key = "coll_cma_min",
     .nps = {2, 4},
     .var = "FERRY_COLL_CMA_MIN",
     .label = {"p2p", "cells", "single copy"},
     .env = {"FERRY_COLL=p2p", "FERRY_COLL=auto;FERRY_COLL_CMA_MIN=1G",
             "FERRY_COLL=auto;FERRY_COLL_CMA_MIN=0"},
     .sizes = {8, 1024, 8192, 16384, 32768, 49152, 65536, 131072, 262144,
               1048576, 4194304},
     .nsizes = 11,
     .quick_sizes = {1024, 32768, 262144},
     .nquick = 3},
    {.op = "allreduce",
     .key = "coll_slice_min",
     .nps = {2, 4},
     .var = "FERRY_COLL_SLICE_MIN",
     .label = {"p2p", "whole", "slices"},
     .env = {"FERRY_COLL=p2p", "FERRY_COLL=auto;FERRY_COLL_SLICE_MIN=1G",
             "FERRY_COLL=auto;FERRY_COLL_SLICE_MIN=0"},
     .sizes = {64, 256, 1024, 2048, 4096, 8192, 16384, 32768, 131072, 1048576},
     .nsizes = 10,
     .quick_sizes = {256, 4096, 32768},
     .nquick = 3},
    {.op = "allreduce",
     .key = "coll_direct_min",
     .nps = {3, 4},
     .var = "FERRY_COLL_DIRECT_MIN",
     .label = {"p2p", "cells", "direct"},
     .env = {"FERRY_COLL=p2p", "FERRY_COLL=auto;FERRY_COLL_DIRECT_MIN=1G",
             "FERRY_COLL=auto;FERRY_COLL_DIRECT_MIN=0"},
     .sizes = {32768, 65536, 131072, 262144, 524288, 1048576, 4194304},
     .nsizes = 7,
     .quick_sizes = {65536, 262144, 1048576},
     .nquick = 3},
};

static double median(double *v, int n)
{
    double t[COLL_REPS];
    int m = 0;
    for (int i = 0; i < n; i++)
        if (v[i] >= 0)
            t[m++] = v[i];
    if (!m)
        return -1;
    for (int i = 1; i < m; i++)
        for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
            double x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    return m % 2 ? t[m / 2] : (t[m / 2 - 1] + t[m / 2]) / 2;
}

/* Rows "coll,<op>,<size>,<iters>,<us>,<ok>" of one job into rep r. */
static int parse(struct coll_exp *e, int s, int p, int r, char *text,
                 bool *verified)
{
    int rows = 0;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char op[16];
        size_t size;
        int iters, ok;
        double us;
        if (sscanf(line, "coll,%15[a-z],%zu,%d,%lf,%d", op, &size, &iters, &us,
                   &ok) != 5 ||
            strcmp(op, e->op))
            continue;
        for (int k = 0; k < e->nsizes; k++)
            if (e->sizes[k] == size) {
                e->rep[s][p][k][r] = us;
                rows++;
            }
        if (!ok)
            *verified = false;
    }
    return rows;
}

/* The threshold choice (see the top of the file). */
static void choose(struct coll_exp *e)
{
    double best = INFINITY;
    e->chosen = COLL_NEVER;
    e->chosen_idx = e->nsizes;
    /* t = k: sizes from sizes[k] take setting 2; k = nsizes: never. */
    for (int t = e->nsizes; t >= 0; t--) {
        double cost = 0;
        for (int p = 0; p < COLL_NP; p++)
            for (int k = 0; k < e->nsizes; k++) {
                double a = e->us[1][p][k], b = e->us[2][p][k];
                if (a <= 0 || b <= 0)
                    continue;
                cost += (k >= t ? b : a) / fmin(a, b);
            }
        e->cost[t] = cost;
        /* Strictly better only: a tie keeps the larger threshold. */
        if (cost < best - 1e-9) {
            best = cost;
            e->chosen = t == e->nsizes ? COLL_NEVER : e->sizes[t];
            e->chosen_idx = t;
        }
    }
}

static void fmt_size(char *b, size_t n, uint64_t v)
{
    if (v == COLL_NEVER)
        snprintf(b, n, "never");
    else if (v >= (1u << 20) && v % (1u << 20) == 0)
        snprintf(b, n, "%llu MiB", (unsigned long long)(v >> 20));
    else if (v >= 1024 && v % 1024 == 0)
        snprintf(b, n, "%llu KiB", (unsigned long long)(v >> 10));
    else
        snprintf(b, n, "%llu B", (unsigned long long)v);
}

static void report(FILE *f, int reps, bool quick)
{
    fprintf(f,
            "Collectives (bench_coll under mpiexec; median of %d run%s of the "
            "slowest rank's time per call, us%s):\n\n",
            reps, reps == 1 ? "" : "s", quick ? "; --quick" : "");
    for (size_t x = 0; x < FY_ARRAY_LEN(exps); x++) {
        struct coll_exp *e = &exps[x];
        fprintf(f, "| %s | ranks | size | %s | %s | %s | shm/p2p |\n", e->op,
                e->label[0], e->label[1], e->label[2]);
        fprintf(f, "|---|---:|---:|---:|---:|---:|---:|\n");
        for (int p = 0; p < COLL_NP; p++)
            for (int k = 0; k < e->nsizes; k++) {
                char sz[32];
                fmt_size(sz, sizeof(sz), e->sizes[k]);
                double v[COLL_SETS];
                for (int s = 0; s < COLL_SETS; s++)
                    v[s] = e->us[s][p][k];
                if (v[0] < 0 && v[1] < 0 && v[2] < 0)
                    continue;
                fprintf(f, "| %s | %d | %s |", e->op, e->nps[p], sz);
                for (int s = 0; s < COLL_SETS; s++)
                    if (v[s] < 0)
                        fprintf(f, " - |");
                    else
                        fprintf(f, " %.2f |", v[s]);
                double shm = (v[1] > 0 && v[2] > 0) ? fmin(v[1], v[2])
                             : v[1] > 0             ? v[1]
                                                    : v[2];
                if (shm > 0 && v[0] > 0)
                    fprintf(f, " %.2f |\n", shm / v[0]);
                else
                    fprintf(f, " - |\n");
            }
        char c[32];
        fmt_size(c, sizeof(c), e->chosen);
        fprintf(f,
                "\n%s = %s: %s from there, %s below (%s; summed relative "
                "time %.2f over %d points; 'never' %.2f, 'always' %.2f)\n\n",
                e->key, c, e->label[2], e->label[1], e->var,
                e->cost[e->chosen_idx], COLL_NP * e->nsizes, e->cost[e->nsizes],
                e->cost[0]);
    }
}

int lab_coll_run(const struct lab_opts *o, FILE *out)
{
    char mpiexec[4200], prog[4200];
    if (!lab_find_tool(mpiexec, sizeof(mpiexec), "mpiexec") ||
        !lab_find_tool(prog, sizeof(prog), "bench_coll")) {
        fprintf(stderr, "ferry-bench: mpiexec or bench_coll not found next "
                        "to ferry-bench (build them: cmake --build build)\n");
        return 1;
    }
    char tune_path[512] = "";
    struct fy_tuning tf;
    memset(&tf, 0, sizeof(tf));
    if (o->tune) {
        if (o->out)
            snprintf(tune_path, sizeof(tune_path), "%s", o->out);
        else if (fy_tuning_default_path(tune_path, sizeof(tune_path)) != 0) {
            fprintf(stderr, "ferry-bench: no place for the tuning file: set "
                            "FERRY_TUNING or HOME, or pass --out FILE\n");
            return 2;
        }
        /* The other keys of an existing file stay as they are. */
        char err[512];
        int rc = fy_tuning_load_msg(tune_path, &tf, err, sizeof(err));
        if (rc && rc != -ENOENT) {
            fprintf(stderr,
                    "ferry-bench: %s exists but is not a tuning file this "
                    "version reads (%s); not overwriting it\n",
                    tune_path, err);
            return 2;
        }
    }
    /* The jobs measure the settings and the defaults, never a tuning file
     * a previous run left (an empty one is read instead). */
    char tuning[] = "/tmp/ferry-bench-coll-tuning-XXXXXX";
    int tfd = mkstemp(tuning);
    if (tfd < 0) {
        fprintf(stderr, "ferry-bench: mkstemp: %s\n", strerror(errno));
        return 1;
    }
    close(tfd);
    bool quick = o->quick;
    int reps = quick ? 1 : (o->repeats < 5 ? o->repeats : 5);
    for (size_t x = 0; x < FY_ARRAY_LEN(exps); x++) {
        struct coll_exp *e = &exps[x];
        if (quick) {
            memcpy(e->sizes, e->quick_sizes, sizeof(e->sizes));
            e->nsizes = e->nquick;
        }
        for (int s = 0; s < COLL_SETS; s++)
            for (int p = 0; p < COLL_NP; p++)
                for (int k = 0; k < COLL_SIZES; k++)
                    for (int r = 0; r < COLL_REPS; r++)
                        e->rep[s][p][k][r] = -1;
    }
    bool verified = true;
    int jobs = 0, failed = 0;
    char fail[400] = "";
    uint64_t t0 = lab_now_ns();
    for (int r = 0; r < reps; r++)
        for (size_t x = 0; x < FY_ARRAY_LEN(exps); x++) {
            struct coll_exp *e = &exps[x];
            char sizes[512] = "";
            for (int k = 0; k < e->nsizes; k++)
                snprintf(sizes + strlen(sizes), sizeof(sizes) - strlen(sizes),
                         "%s%zu", k ? "," : "", e->sizes[k]);
            for (int p = 0; p < COLL_NP; p++)
                for (int s = 0; s < COLL_SETS; s++) {
                    fprintf(stderr,
                            "\rferry-bench: coll %s, %d ranks, %s, run %d/%d  "
                            "      ",
                            e->op, e->nps[p], e->label[s], r + 1, reps);
                    char *args[] = {prog,      "--op", (char *)e->op,
                                    "--sizes", sizes,  quick ? "--quick" : NULL,
                                    NULL};
                    char *text = NULL, err[300];
                    int rc =
                        lab_run_mpi(mpiexec, e->nps[p], args, e->env[s], tuning,
                                    quick ? 60 : 300, &text, err, sizeof(err));
                    jobs++;
                    int rows = text ? parse(e, s, p, r, text, &verified) : 0;
                    free(text);
                    if (rc != 0 || rows == 0) {
                        failed++;
                        if (!fail[0])
                            snprintf(fail, sizeof(fail),
                                     "%s %d ranks %s: exit %d, %d rows: %.300s",
                                     e->op, e->nps[p], e->label[s], rc, rows,
                                     err);
                    }
                }
        }
    fprintf(stderr, "\n");
    unlink(tuning);
    for (size_t x = 0; x < FY_ARRAY_LEN(exps); x++) {
        struct coll_exp *e = &exps[x];
        for (int s = 0; s < COLL_SETS; s++)
            for (int p = 0; p < COLL_NP; p++)
                for (int k = 0; k < e->nsizes; k++)
                    e->us[s][p][k] = median(e->rep[s][p][k], reps);
        choose(e);
    }
    report(out, reps, quick);
    fprintf(out, "%d jobs, %d failed, %.0f s%s\n", jobs, failed,
            (double)(lab_now_ns() - t0) / 1e9,
            verified ? "" : "; A JOB RECEIVED WRONG RESULTS");
    if (failed)
        fprintf(out, "first failure: %s\n", fail);
    if (failed || !verified)
        return 1;
    if (!o->tune)
        return 0;
    tf.has_coll_cma_min = true;
    tf.coll_cma_min = exps[0].chosen;
    tf.has_coll_slice_min = true;
    tf.coll_slice_min = exps[1].chosen;
    tf.has_coll_direct_min = true;
    tf.coll_direct_min = exps[2].chosen;
    int rc = fy_tuning_save(tune_path, &tf,
                            "written by ferry-bench --coll --tune (the "
                            "collectives' keys; other keys kept)");
    if (rc) {
        fprintf(stderr, "ferry-bench: cannot write %s: %s\n", tune_path,
                strerror(-rc));
        return 1;
    }
    fprintf(out, "wrote %s\n", tune_path);
    return 0;
}
