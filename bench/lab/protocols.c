/* SPDX-License-Identifier: MIT */
/* Seed 001's protocols on the library's own code paths: bench_earlylate
 * (bench/earlylate.c, the early/late receiver ping-pong of Fig. 5) run as a
 * real 2-rank job under Ferry's mpiexec once per protocol setting, the
 * setting passed in the job's environment (FERRY_PROTO, FERRY_BTP,
 * FERRY_RECV_WRITE, ...), and the choice of settings --tune writes. P0
 * alone runs this, after P1 has left: the jobs need both cores. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab.h"
#include "util/tuning.h"

extern char **environ;

struct lab_proto_res lab_proto;

/* The settings measured, in plot order. main: in the early/late figures
 * (seed Fig. 6); the push-pull ones also make the BTP sweep (Fig. 3),
 * with push-zero (BTP 0) and push-all (BTP = the message) at its ends. */
static const struct {
    const char *label;
    enum lab_proto_kind kind;
    uint64_t btp;
    bool main, quick;
    const char *env; /* ';'-separated NAME=VALUE */
} settings[] = {
    {"auto", LAB_PROTO_AUTO, 0, true, true, ""},
    {"push-zero", LAB_PROTO_PUSHZERO, 0, true, true,
     "FERRY_PROTO=pushzero;FERRY_RECV_WRITE=0"},
    {"push-pull 64", LAB_PROTO_PUSHPULL, 64, false, false,
     "FERRY_PROTO=pushpull;FERRY_BTP=64;FERRY_RECV_WRITE=0"},
    {"push-pull 192", LAB_PROTO_PUSHPULL, 192, true, true,
     "FERRY_PROTO=pushpull;FERRY_BTP=192;FERRY_RECV_WRITE=0"},
    {"push-pull 1K", LAB_PROTO_PUSHPULL, 1024, false, false,
     "FERRY_PROTO=pushpull;FERRY_BTP=1024;FERRY_RECV_WRITE=0"},
    {"push-pull 4K", LAB_PROTO_PUSHPULL, 4096, true, true,
     "FERRY_PROTO=pushpull;FERRY_BTP=4096;FERRY_RECV_WRITE=0"},
    {"push-pull 16K", LAB_PROTO_PUSHPULL, 16384, true, true,
     "FERRY_PROTO=pushpull;FERRY_BTP=16384;FERRY_RECV_WRITE=0"},
    {"push-pull 64K", LAB_PROTO_PUSHPULL, 65536, true, true,
     "FERRY_PROTO=pushpull;FERRY_BTP=65536;FERRY_RECV_WRITE=0"},
    {"push-pull 256K", LAB_PROTO_PUSHPULL, 262144, false, false,
     "FERRY_PROTO=pushpull;FERRY_BTP=262144;FERRY_RECV_WRITE=0"},
    {"push-all", LAB_PROTO_PUSHALL, 0, true, true,
     "FERRY_PROTO=pushall;FERRY_RECV_WRITE=0"},
    {"write", LAB_PROTO_WRITE, 0, true, true,
     "FERRY_PROTO=pushzero;FERRY_RECV_WRITE=1;FERRY_RECV_WRITE_MIN=8192"},
};

/* Variables a setting controls, and the launcher's own (a job started
 * from under mpiexec must not think it is a rank of the outer job). */
static const char *const scrub[] = {
    "FERRY_PROTO",          "FERRY_BTP",
    "FERRY_BTP1",           "FERRY_RECV_WRITE",
    "FERRY_RECV_WRITE_MIN", "FERRY_TUNING",
    "FERRY_RANK",           "FERRY_SIZE",
    "FERRY_SHM_FD",         "FERRY_JOBID",
    "FERRY_NCPUS",          "FERRY_COLL",
    "FERRY_COLL_CMA_MIN",   "FERRY_COLL_SLICE_MIN",
    "FERRY_COLL_DIRECT_MIN"};

static cpu_set_t saved_cpus;
static bool have_saved_cpus;

void lab_proto_save_affinity(void)
{
    have_saved_cpus =
        sched_getaffinity(0, sizeof(saved_cpus), &saved_cpus) == 0;
}

static cpu_set_t pinned_cpus;
static bool unpinned;

void lab_proto_unpin(void)
{
    unpinned = have_saved_cpus &&
               sched_getaffinity(0, sizeof(pinned_cpus), &pinned_cpus) == 0 &&
               sched_setaffinity(0, sizeof(saved_cpus), &saved_cpus) == 0;
}

void lab_proto_repin(void)
{
    if (unpinned)
        sched_setaffinity(0, sizeof(pinned_cpus), &pinned_cpus);
    unpinned = false;
}

static bool scrubbed(const char *kv)
{
    for (size_t i = 0; i < FY_ARRAY_LEN(scrub); i++) {
        size_t n = strlen(scrub[i]);
        if (!strncmp(kv, scrub[i], n) && kv[n] == '=')
            return true;
    }
    return false;
}

int lab_run_mpi(const char *mpiexec, int np, char *const *args, const char *env,
                const char *tuning, int timeout, char **out, char *err,
                size_t errlen)
{
    int po[2];
    if (pipe2(po, O_CLOEXEC) != 0)
        return -1;
    char errpath[] = "/tmp/ferry-bench-proto-XXXXXX";
    int efd = mkstemp(errpath);
    if (efd < 0) {
        close(po[0]);
        close(po[1]);
        return -1;
    }
    unlink(errpath);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(po[0]);
        close(po[1]);
        close(efd);
        return -1;
    }
    if (pid == 0) {
        /* P0 is pinned to one CPU: the job gets back what we started with
         * (mpiexec binds its ranks within it). */
        if (have_saved_cpus)
            sched_setaffinity(0, sizeof(saved_cpus), &saved_cpus);
        dup2(po[1], 1);
        dup2(efd, 2);
        size_t n = 0;
        while (environ[n])
            n++;
        char **envp = calloc(n + 16, sizeof(char *));
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (!scrubbed(environ[i]))
                envp[k++] = environ[i];
        char *own = strdup(env);
        for (char *save = NULL, *tok = strtok_r(own, ";", &save); tok;
             tok = strtok_r(NULL, ";", &save))
            if (k < n + 14)
                envp[k++] = tok;
        static char tv[600];
        snprintf(tv, sizeof(tv), "FERRY_TUNING=%s", tuning);
        envp[k++] = tv;
        envp[k] = NULL;
        char tmo[16], nps[16];
        snprintf(tmo, sizeof(tmo), "%d", timeout);
        snprintf(nps, sizeof(nps), "%d", np);
        char *argv[40] = {(char *)mpiexec, "--timeout", tmo, "-n", nps};
        for (int i = 0; args[i] && i < 34; i++)
            argv[5 + i] = args[i];
        execve(mpiexec, argv, envp);
        _exit(127);
    }
    close(po[1]);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (len + 4096 > cap)
            buf = realloc(buf, cap *= 2);
        ssize_t r = read(po[0], buf + len, cap - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    buf[len] = '\0';
    close(po[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    /* The last line of stderr says why a job failed. */
    char tail[512] = "";
    off_t end = lseek(efd, 0, SEEK_END);
    off_t from =
        end > (off_t)sizeof(tail) - 1 ? end - (off_t)sizeof(tail) + 1 : 0;
    ssize_t got = pread(efd, tail, sizeof(tail) - 1, from);
    close(efd);
    tail[got > 0 ? got : 0] = '\0';
    while (got > 0 && tail[got - 1] == '\n')
        tail[--got] = '\0';
    char *last = strrchr(tail, '\n');
    snprintf(err, errlen, "%s", last ? last + 1 : tail);
    *out = buf;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* One bench_earlylate job of 2 ranks that runs every setting, interleaved
 * by blocks of iterations (--setting LABEL:ENV each: the library's protocol
 * choices are MPI_T control variables it may write at run time), so that
 * drift of the machine's speed - on a shared VM it changes from second to
 * second - falls on every setting alike, while each setting's timed
 * iterations inherit their caches from its own (bench/earlylate.c). */
static int run_job(const char *mpiexec, const char *prog,
                   const struct lab_proto_res *P, const char *tuning,
                   bool quick, char **out, char *err, size_t errlen)
{
    static char spec[LAB_PROTO_MAX][200];
    char *args[2 + 2 * LAB_PROTO_MAX + 1];
    int n = 0;
    args[n++] = (char *)prog;
    if (quick)
        args[n++] = "--quick";
    for (int i = 0; i < P->nset; i++) {
        snprintf(spec[i], sizeof(spec[i]), "%s:%s", P->label[i], P->env[i]);
        args[n++] = "--setting";
        args[n++] = spec[i];
    }
    args[n] = NULL;
    return lab_run_mpi(mpiexec, 2, args, "", tuning, quick ? 300 : 900, out,
                       err, errlen);
}

/* Every job prints the same sizes in the same order (early, then late):
 * the first one defines the list. */
static int size_index(struct lab_proto_res *P, size_t size)
{
    for (int k = 0; k < P->nsizes; k++)
        if (P->sizes[k] == size)
            return k;
    if (P->nsizes == LAB_MAX_SIZES)
        return -1;
    P->sizes[P->nsizes] = size;
    return P->nsizes++;
}

/* The CSV rows of one job into repeat rep (each row starts with its
 * setting's label). Returns rows read. */
static int parse_rows(struct lab_proto_res *P, int rep, char *text,
                      bool *verified)
{
    int rows = 0;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        int s = -1;
        for (int i = 0; i < P->nset && s < 0; i++) {
            size_t n = strlen(P->label[i]);
            if (!strncmp(line, P->label[i], n) && line[n] == ',')
                s = i;
        }
        if (s < 0)
            continue;
        line += strlen(P->label[s]) + 1;
        char mode[8];
        size_t size;
        int iters, ver;
        double t, comm, cmin, comp, x, y, ow, ok;
        if (sscanf(line, "%7[a-z],%zu,%d,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%d",
                   mode, &size, &iters, &t, &comm, &cmin, &comp, &x, &y, &ow,
                   &ok, &ver) != 12)
            continue;
        int m = !strcmp(mode, "late");
        int k = size_index(P, size);
        if (k < 0)
            continue;
        P->rep_comm[s][m][k][rep] = comm;
        P->rep_t[s][m][k][rep] = t;
        if (rep == 0 || ok < P->order_ok[s][m][k])
            P->order_ok[s][m][k] = ok;
        P->x_us[m][k] = x;
        P->y_us[m][k] = y;
        if (!ver)
            *verified = false;
        rows++;
    }
    return rows;
}

static double median_of(const double *v, int n)
{
    double tmp[LAB_MAX_REPEATS];
    int m = 0;
    for (int i = 0; i < n; i++)
        if (v[i] > -1e29)
            tmp[m++] = v[i];
    return m ? lab_median(tmp, m) : -1e30;
}

/* comm, floored: a ratio of two near-zero figures means nothing. */
static double fl(double v)
{
    return v < 0.1 ? 0.1 : v;
}

static bool have(const struct lab_proto_res *P, int s, int m, int k)
{
    return P->comm[s][m][k] > -1e29;
}

/* The choice (documented in bench/README.md, "Early and late receivers"). */
static void choose(struct lab *L, struct lab_proto_res *P)
{
    uint64_t eager = L->lib_eager;
    /* BTP: the push-pull setting with the smallest summed slowdown against
     * the best push-pull setting at each size above the eager limit, early
     * and late; a tie goes to the smaller BTP (a smaller push buffer). */
    P->btp_set = -1;
    double best_score = 1e300;
    for (int s = 0; s < P->nset; s++) {
        P->btp_score[s] = -1;
        if (P->kind[s] != LAB_PROTO_PUSHPULL)
            continue;
        double score = 0;
        for (int m = 0; m < 2; m++)
            for (int k = 0; k < P->nsizes; k++) {
                if (P->sizes[k] <= eager || !have(P, s, m, k))
                    continue;
                double best = 1e300;
                for (int o = 0; o < P->nset; o++)
                    if (P->kind[o] == LAB_PROTO_PUSHPULL && have(P, o, m, k))
                        best = fmin(best, fl(P->comm[o][m][k]));
                score += fl(P->comm[s][m][k]) / best - 1;
            }
        P->btp_score[s] = score;
        if (score < best_score) {
            best_score = score;
            P->btp_set = s;
        }
    }
    /* proto: the candidate whose worst ratio to the best candidate, over
     * every size above the eager limit, early and late, is smallest. */
    int cand[4], nc = 0;
    if (P->btp_set >= 0)
        cand[nc++] = P->btp_set;
    for (int s = 0; s < P->nset; s++)
        if (P->kind[s] == LAB_PROTO_AUTO || P->kind[s] == LAB_PROTO_PUSHZERO ||
            P->kind[s] == LAB_PROTO_PUSHALL)
            cand[nc++] = s;
    P->proto_set = -1;
    double best_worst = 1e300;
    for (int s = 0; s < P->nset; s++)
        P->worst[s] = -1;
    for (int c = 0; c < nc; c++) {
        int s = cand[c];
        double worst = 0;
        for (int m = 0; m < 2; m++)
            for (int k = 0; k < P->nsizes; k++) {
                if (P->sizes[k] <= eager || !have(P, s, m, k))
                    continue;
                double best = 1e300;
                for (int o = 0; o < nc; o++)
                    if (have(P, cand[o], m, k))
                        best = fmin(best, fl(P->comm[cand[o]][m][k]));
                worst = fmax(worst, fl(P->comm[s][m][k]) / best);
            }
        P->worst[s] = worst;
        if (worst > 0 && worst < best_worst) {
            best_worst = worst;
            P->proto_set = s;
        }
    }
    /* recv_write: the write protocol's early-receiver figures against the
     * plain rendezvous' (push-zero, same sizes) from 64 KiB to 4 MiB, as a
     * geometric mean of the ratios: on if <= 1. recv_write_min: the
     * smallest size above the eager limit from which that mean over the
     * larger sizes stays <= 1. */
    int w = -1, z = -1;
    for (int s = 0; s < P->nset; s++) {
        if (P->kind[s] == LAB_PROTO_WRITE)
            w = s;
        if (P->kind[s] == LAB_PROTO_PUSHZERO)
            z = s;
    }
    P->rw_measured = false;
    if (w >= 0 && z >= 0) {
        double lsum = 0;
        int n = 0;
        for (int k = 0; k < P->nsizes; k++)
            if (P->sizes[k] >= 65536 && P->sizes[k] <= (4u << 20) &&
                have(P, w, 0, k) && have(P, z, 0, k)) {
                lsum += log(fl(P->comm[w][0][k]) / fl(P->comm[z][0][k]));
                n++;
            }
        if (n) {
            P->rw_measured = true;
            P->rw_ratio = exp(lsum / n);
            P->recv_write = P->rw_ratio <= 1.0;
            P->recv_write_min = 65536;
            for (int from = P->nsizes - 1; from >= 0; from--) {
                if (P->sizes[from] <= eager)
                    break;
                double ls = 0;
                int c = 0;
                for (int k = from; k < P->nsizes; k++)
                    if (have(P, w, 0, k) && have(P, z, 0, k)) {
                        ls += log(fl(P->comm[w][0][k]) / fl(P->comm[z][0][k]));
                        c++;
                    }
                if (c && ls <= 0)
                    P->recv_write_min = P->sizes[from];
                else if (P->sizes[from] < 65536)
                    break;
            }
        }
    }
}

bool lab_find_tool(char *out, size_t len, const char *name)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return false;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return false;
    *slash = '\0';
    snprintf(out, len, "%s/%s", self, name);
    return access(out, X_OK) == 0;
}

void lab_exp_protocols(struct lab *L)
{
    struct lab_proto_res *P = &lab_proto;
    memset(P, 0, sizeof(*P));
    char mpiexec[4200], prog[4200];
    if (!lab_find_tool(mpiexec, sizeof(mpiexec), "mpiexec") ||
        !lab_find_tool(prog, sizeof(prog), "bench_earlylate")) {
        snprintf(P->why, sizeof(P->why),
                 "mpiexec or bench_earlylate not found next to ferry-bench "
                 "(build them: cmake --build build)");
        return;
    }
    /* The jobs measure the FERRY_* settings and the defaults, never a
     * tuning file a previous --tune left (an empty one is read instead). */
    char tuning[] = "/tmp/ferry-bench-empty-tuning-XXXXXX";
    int tfd = mkstemp(tuning);
    if (tfd < 0) {
        snprintf(P->why, sizeof(P->why), "mkstemp: %s", strerror(errno));
        return;
    }
    close(tfd);
    bool quick = L->opt.quick;
    P->quick = quick;
    P->repeats = quick ? 1 : L->opt.repeats < 5 ? L->opt.repeats : 5;
    P->eager = L->lib_eager;
    P->nset = 0;
    int idx[LAB_PROTO_MAX];
    for (size_t s = 0; s < FY_ARRAY_LEN(settings); s++)
        if (!quick || settings[s].quick)
            idx[P->nset++] = (int)s;
    /* settings[] order is the table's: keep only the chosen rows, in
     * place (the quick run skips the BTP sweep's extremes). */
    for (int i = 0; i < P->nset; i++) {
        snprintf(P->label[i], sizeof(P->label[i]), "%s",
                 settings[idx[i]].label);
        snprintf(P->env[i], sizeof(P->env[i]), "%s", settings[idx[i]].env);
        P->kind[i] = settings[idx[i]].kind;
        P->btp[i] = settings[idx[i]].btp;
        P->main[i] = settings[idx[i]].main;
    }
    for (int s = 0; s < LAB_PROTO_MAX; s++)
        for (int m = 0; m < 2; m++)
            for (int k = 0; k < LAB_MAX_SIZES; k++)
                for (int r = 0; r < LAB_MAX_REPEATS; r++)
                    P->rep_comm[s][m][k][r] = P->rep_t[s][m][k][r] = -1e30;
    P->verified = true;
    uint64_t t0 = lab_now_ns();
    /* Repeats outermost: a slow spell of the machine hits every setting. */
    for (int rep = 0; rep < P->repeats; rep++) {
        lab_progress(L, "protocols: %d settings interleaved, run %d/%d",
                     P->nset, rep + 1, P->repeats);
        char *out = NULL, err[300];
        int rc =
            run_job(mpiexec, prog, P, tuning, quick, &out, err, sizeof(err));
        P->jobs++;
        int rows = 0;
        if (out)
            rows = parse_rows(P, rep, out, &P->verified);
        free(out);
        if (rc != 0 || rows == 0) {
            P->failed++;
            if (!P->fail[0])
                snprintf(P->fail, sizeof(P->fail),
                         "run %d: exit %d, %d rows: %.300s", rep + 1, rc, rows,
                         err);
        }
    }
    unlink(tuning);
    P->seconds = (double)(lab_now_ns() - t0) / 1e9;
    for (int i = 0; i < P->nset; i++)
        for (int m = 0; m < 2; m++)
            for (int k = 0; k < P->nsizes; k++) {
                P->comm[i][m][k] = median_of(P->rep_comm[i][m][k], P->repeats);
                P->t[i][m][k] = median_of(P->rep_t[i][m][k], P->repeats);
            }
    P->done = P->nsizes > 0;
    if (!P->done && !P->why[0])
        snprintf(P->why, sizeof(P->why), "no job produced results (%.250s)",
                 P->fail);
    if (P->done)
        choose(L, P);
}

/* ---- outputs ------------------------------------------------------------ */

static void jnum(FILE *f, double v)
{
    if (v > -1e29 && isfinite(v))
        fprintf(f, "%.4g", v);
    else
        fputs("null", f);
}

void lab_proto_write_json(FILE *f)
{
    const struct lab_proto_res *P = &lab_proto;
    fputs("\"protocols\": ", f);
    if (!P->done) {
        fputs("null", f);
        return;
    }
    fprintf(f,
            "{\"quick\": %s, \"repeats\": %d, \"jobs\": %d, \"failed_jobs\": "
            "%d, \"verified\": %s, \"seconds\": %.1f, \"eager_max\": %llu,\n"
            " \"sizes\": [",
            P->quick ? "true" : "false", P->repeats, P->jobs, P->failed,
            P->verified ? "true" : "false", P->seconds,
            (unsigned long long)P->eager);
    for (int k = 0; k < P->nsizes; k++)
        fprintf(f, "%s%zu", k ? ", " : "", P->sizes[k]);
    fputs("],\n \"settings\": [", f);
    static const char *const kinds[] = {"auto", "pushzero", "pushpull",
                                        "pushall", "write"};
    for (int i = 0; i < P->nset; i++)
        fprintf(f,
                "%s\n  {\"label\": \"%s\", \"kind\": \"%s\", \"btp\": %llu, "
                "\"main\": %s, \"env\": \"%s\"}",
                i ? "," : "", P->label[i], kinds[P->kind[i]],
                (unsigned long long)P->btp[i], P->main[i] ? "true" : "false",
                P->env[i]);
    fputs("],\n", f);
    static const char *const modes[] = {"early", "late"};
    for (int m = 0; m < 2; m++) {
        fprintf(f, " \"%s\": {\"x_us\": [", modes[m]);
        for (int k = 0; k < P->nsizes; k++) {
            fputs(k ? ", " : "", f);
            jnum(f, P->x_us[m][k]);
        }
        fputs("], \"y_us\": [", f);
        for (int k = 0; k < P->nsizes; k++) {
            fputs(k ? ", " : "", f);
            jnum(f, P->y_us[m][k]);
        }
        fputs("],\n  \"comm_us\": {", f);
        for (int i = 0; i < P->nset; i++) {
            fprintf(f, "%s\"%s\": [", i ? ", " : "", P->label[i]);
            for (int k = 0; k < P->nsizes; k++) {
                fputs(k ? ", " : "", f);
                jnum(f, P->comm[i][m][k]);
            }
            fputs("]", f);
        }
        fputs("},\n  \"t_us\": {", f);
        for (int i = 0; i < P->nset; i++) {
            fprintf(f, "%s\"%s\": [", i ? ", " : "", P->label[i]);
            for (int k = 0; k < P->nsizes; k++) {
                fputs(k ? ", " : "", f);
                jnum(f, P->t[i][m][k]);
            }
            fputs("]", f);
        }
        fputs("},\n  \"order_ok\": {", f);
        for (int i = 0; i < P->nset; i++) {
            fprintf(f, "%s\"%s\": [", i ? ", " : "", P->label[i]);
            for (int k = 0; k < P->nsizes; k++)
                fprintf(f, "%s%.2f", k ? ", " : "", P->order_ok[i][m][k]);
            fputs("]", f);
        }
        fputs("}},\n", f);
    }
    fputs(" \"choice\": {\"proto\": ", f);
    if (P->proto_set >= 0)
        fprintf(f, "\"%s\", \"proto_setting\": \"%s\"",
                kinds[P->kind[P->proto_set]], P->label[P->proto_set]);
    else
        fputs("null", f);
    fputs(", \"btp\": ", f);
    if (P->btp_set >= 0)
        fprintf(f, "%llu", (unsigned long long)P->btp[P->btp_set]);
    else
        fputs("null", f);
    if (P->rw_measured)
        fprintf(f,
                ", \"recv_write\": %d, \"recv_write_min\": %llu, "
                "\"write_vs_pushzero_early\": %.3f",
                P->recv_write, (unsigned long long)P->recv_write_min,
                P->rw_ratio);
    fputs(", \"worst_ratio\": {", f);
    int n = 0;
    for (int i = 0; i < P->nset; i++)
        if (P->worst[i] >= 0)
            fprintf(f, "%s\"%s\": %.3f", n++ ? ", " : "", P->label[i],
                    P->worst[i]);
    fputs("}, \"btp_score\": {", f);
    n = 0;
    for (int i = 0; i < P->nset; i++)
        if (P->btp_score[i] >= 0)
            fprintf(f, "%s\"%s\": %.3f", n++ ? ", " : "", P->label[i],
                    P->btp_score[i]);
    fputs("}}}", f);
}

static void fmt(char *b, size_t n, double v)
{
    if (v < -1e29)
        snprintf(b, n, "-");
    else if (fabs(v) < 10)
        snprintf(b, n, "%.2f", v);
    else if (fabs(v) < 1000)
        snprintf(b, n, "%.1f", v);
    else
        snprintf(b, n, "%.0f", v);
}

/* Geometric mean of a/b over sizes in [lo, hi] of mode m (0: none). */
static double gratio(const struct lab_proto_res *P, int a, int b, int m,
                     size_t lo, size_t hi)
{
    double ls = 0;
    int n = 0;
    for (int k = 0; k < P->nsizes; k++)
        if (P->sizes[k] >= lo && P->sizes[k] <= hi && have(P, a, m, k) &&
            have(P, b, m, k)) {
            ls += log(fl(P->comm[a][m][k]) / fl(P->comm[b][m][k]));
            n++;
        }
    return n ? exp(ls / n) : 0;
}

static int find_kind(const struct lab_proto_res *P, enum lab_proto_kind k)
{
    for (int i = 0; i < P->nset; i++)
        if (P->kind[i] == k)
            return i;
    return -1;
}

void lab_proto_print_choice(FILE *f)
{
    const struct lab_proto_res *P = &lab_proto;
    if (!P->done)
        return;
    static const char *const kinds[] = {"auto", "pushzero", "pushpull",
                                        "pushall", "write"};
    if (P->proto_set >= 0)
        fprintf(f, "proto = %s (%s: worst %.2fx the best setting)\n",
                kinds[P->kind[P->proto_set]], P->label[P->proto_set],
                P->worst[P->proto_set]);
    if (P->btp_set >= 0)
        fprintf(f, "btp = %llu (summed slowdown %.2f)\n",
                (unsigned long long)P->btp[P->btp_set],
                P->btp_score[P->btp_set]);
    if (P->rw_measured) {
        fprintf(f,
                "recv_write = %d (early, 64 KiB-4 MiB: write / push-zero = "
                "%.2f)\n",
                P->recv_write, P->rw_ratio);
        if (P->recv_write)
            fprintf(f, "recv_write_min = %llu\n",
                    (unsigned long long)P->recv_write_min);
    }
}

void lab_proto_tuning(struct fy_tuning *out)
{
    const struct lab_proto_res *P = &lab_proto;
    if (!P->done)
        return;
    static const char *const kinds[] = {"auto", "pushzero", "pushpull",
                                        "pushall", "write"};
    if (P->proto_set >= 0) {
        out->has_proto = true;
        snprintf(out->proto, sizeof(out->proto), "%s",
                 kinds[P->kind[P->proto_set]]);
    }
    if (P->btp_set >= 0) {
        out->has_btp = true;
        out->btp = P->btp[P->btp_set];
    }
    if (P->rw_measured) {
        out->has_recv_write = true;
        out->recv_write = (uint64_t)P->recv_write;
        if (P->recv_write) {
            out->has_recv_write_min = true;
            out->recv_write_min = P->recv_write_min;
        }
    }
}

static void md_table(FILE *f, const struct lab_proto_res *P, int m, bool sweep)
{
    char b[32];
    fputs("| size |", f);
    for (int i = 0; i < P->nset; i++)
        if (sweep ? (P->kind[i] != LAB_PROTO_AUTO &&
                     P->kind[i] != LAB_PROTO_WRITE)
                  : P->main[i])
            fprintf(f, " %s |", P->label[i]);
    fputs(" order held |\n|---:|", f);
    for (int i = 0; i < P->nset; i++)
        if (sweep ? (P->kind[i] != LAB_PROTO_AUTO &&
                     P->kind[i] != LAB_PROTO_WRITE)
                  : P->main[i])
            fputs("---:|", f);
    fputs("---:|\n", f);
    for (int k = 0; k < P->nsizes; k++) {
        fprintf(f, "| %s |", lab_size_str(P->sizes[k], b, sizeof(b)));
        double ok = 1;
        for (int i = 0; i < P->nset; i++) {
            if (!(sweep ? (P->kind[i] != LAB_PROTO_AUTO &&
                           P->kind[i] != LAB_PROTO_WRITE)
                        : P->main[i]))
                continue;
            fmt(b, sizeof(b), P->comm[i][m][k]);
            fprintf(f, " %s |", b);
            ok = fmin(ok, P->order_ok[i][m][k]);
        }
        fprintf(f, " %.0f%% |\n", ok * 100);
    }
}

void lab_proto_write_md(FILE *f)
{
    const struct lab_proto_res *P = &lab_proto;
    fputs("## Early and late receivers (seed 001, sec. 5.3)\n\n", f);
    if (!P->done) {
        fprintf(f, "Not measured: %s.\n\n",
                P->why[0] ? P->why : "not run (full run or --protocols)");
        return;
    }
    fprintf(f,
            "`bench_earlylate` (bench/earlylate.c, the seed's Fig. 5) ran as "
            "a 2-rank job under Ferry's `mpiexec` %d time%s (%d jobs, %d "
            "failed; %.0f s), each job running every setting below, "
            "interleaved in blocks of 16 iterations: before a block both "
            "ranks write its setting through MPI_T control variables, so the "
            "machine's drift falls on every setting alike; a block's first "
            "two iterations are not timed, so every timed one inherits the "
            "caches its own setting left (a program runs one protocol, not "
            "a mix). Ping: barrier; "
            "t0; compute x; MPI_Isend; compute y; MPI_Recv; MPI_Wait. Pong: "
            "barrier; compute y; MPI_Recv; compute x; MPI_Isend; MPI_Wait. "
            "Early receiver: x = %.0f us, y = "
            "%.0f us (pong waits in its receive before ping sends). Late "
            "receiver: x = %.0f us, y = x + 20 us + 3 times the size's plain "
            "one-way time under the slowest setting (the message has "
            "arrived, whole, before pong "
            "receives). Figures are comm = t minus the computation on the "
            "critical path as it was timed (early: ping's x + pong's x; "
            "late: pong's y + pong's x), in us: the median over iterations, "
            "then over runs. Every size's data was checked both ways%s. "
            "\"order held\": the least share of iterations, over the row's "
            "settings, in which pong's receive started before ping's send "
            "(early) or a whole one-way time after it (late).\n\n",
            P->repeats, P->repeats > 1 ? "s" : "", P->jobs, P->failed,
            P->seconds, P->x_us[0][0], P->y_us[0][0], P->x_us[1][0],
            P->verified ? " and every byte was right"
                        : " and **a job received wrong bytes**");
    if (P->failed)
        fprintf(f, "First failed job: %s.\n\n", P->fail);
    fputs("Settings: `auto` is the library's defaults (FERRY_* unset); "
          "`push-zero` FERRY_PROTO=pushzero (plain rendezvous); `push-pull "
          "N` FERRY_PROTO=pushpull FERRY_BTP=N; `push-all` "
          "FERRY_PROTO=pushall; all of them with FERRY_RECV_WRITE=0. "
          "`write` is seed 002's receiver-initiated write "
          "(FERRY_RECV_WRITE=1, receive buffers from 8 KiB offered: "
          "FERRY_RECV_WRITE_MIN=8192) "
          "over push-zero. "
          "**If the library in this build does not implement these "
          "settings yet, every column is the same code measured again and "
          "the differences are noise.**\n\n",
          f);
    fputs("### Early receiver (seed Fig. 6, left): comm, us\n\n", f);
    md_table(f, P, 0, false);
    fputs("\n### Late receiver (seed Fig. 6, right): comm, us\n\n", f);
    md_table(f, P, 1, false);
    fputs("\nThe sends are nonblocking, completed after the receive (the "
          "seed's pp_send returns once the pushed part has left), so a "
          "late receiver's lateness is not in a rendezvous sender's "
          "figure.\n\n",
          f);
    fputs("### BTP sweep (seed Fig. 3): comm, us, late receiver\n\n", f);
    md_table(f, P, 1, true);
    fputs("\nThe same, early receiver:\n\n", f);
    md_table(f, P, 0, true);

    fputs("\n### Against the seed's conclusions\n\n", f);
    int pz = find_kind(P, LAB_PROTO_PUSHZERO),
        pa = find_kind(P, LAB_PROTO_PUSHALL);
    int wr = find_kind(P, LAB_PROTO_WRITE), pp = P->btp_set;
    size_t lo = (size_t)P->eager + 1;
    if (pp >= 0) {
        fprintf(f,
                "- *Push-Pull steady in all cases.* %s, above the eager "
                "limit, early and late, is at worst %.2fx the best of "
                "auto/push-zero/push-all/itself at the same size%s.\n",
                P->label[pp], P->worst[pp],
                P->worst[pp] <= 1.25 ? ": steady here"
                                     : ": not the steadiest here");
        if (pz >= 0)
            fprintf(f,
                    "- *Push-Zero slower for early receivers.* push-zero / "
                    "%s, early, above the eager limit (geometric mean): "
                    "%.2f%s.\n",
                    P->label[pp], gratio(P, pz, pp, 0, lo, SIZE_MAX),
                    gratio(P, pz, pp, 0, lo, SIZE_MAX) > 1.05
                        ? " (slower, as in the seed)"
                        : " (not slower here)");
        if (pa >= 0)
            fprintf(f,
                    "- *Push-All degrades for large late messages.* "
                    "push-all / %s, late, 1 MiB and up: %.2f%s.\n",
                    P->label[pp], gratio(P, pa, pp, 1, 1u << 20, SIZE_MAX),
                    gratio(P, pa, pp, 1, 1u << 20, SIZE_MAX) > 1.05
                        ? " (degrades, as in the seed)"
                        : " (does not degrade here)");
    }
    if (wr >= 0 && pz >= 0)
        fprintf(f,
                "- *The write protocol helps early receivers (seed 002).* "
                "write / push-zero, early, 64 KiB-4 MiB: %.2f%s.\n",
                gratio(P, wr, pz, 0, 65536, 4u << 20),
                gratio(P, wr, pz, 0, 65536, 4u << 20) < 0.95
                    ? " (a gain)"
                    : " (no gain here)");
    fputs("\n### Choice (what --tune writes)\n\n", f);
    fputs("BTP: the push-pull setting with the smallest summed slowdown "
          "(its figure over the best push-pull figure, minus 1) over every "
          "size above the eager limit, early and late. proto: among auto, "
          "push-zero, push-pull at that BTP and push-all, the one whose "
          "worst ratio to the best of them, over the same points, is "
          "smallest. recv_write: 1 if the write protocol's early figures "
          "from 64 KiB to 4 MiB are at most push-zero's (geometric mean of "
          "the ratios <= 1); recv_write_min: the smallest size above the "
          "eager limit from which that still holds.\n\n```\n",
          f);
    lab_proto_print_choice(f);
    fputs("```\n\n", f);
}
