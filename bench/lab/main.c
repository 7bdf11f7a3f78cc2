/* SPDX-License-Identifier: MIT */
/* ferry-bench: options, the order of the experiments, and the outputs
 * (report.md + results.json + plots, or a tuning file with --tune). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab.h"
#include "util/tuning.h"

extern char **environ;

#ifndef FERRY_LAB_PLOT
#define FERRY_LAB_PLOT "plot.py"
#endif

static const char *const plot_files[] = {
    "bandwidth.png", "latency.png",   "cache.png",     "sweeps.png",
    "memcpy.png",    "crossover.png", "protocols.png", "btp.png",
};

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: ferry-bench [--quick] [--out DIR] [--only LIST] [--repeats N]\n"
        "                   [--no-plots] [--no-protocols]\n"
        "       ferry-bench --protocols [--quick] [--out DIR] [--repeats N]\n"
        "       ferry-bench --tune [--quick] [--out FILE] [--no-protocols]\n"
        "       ferry-bench --ops [--quick] [--repeats N]\n"
        "       ferry-bench --coll [--quick] [--repeats N] [--tune [--out "
        "FILE]]\n"
        "       ferry-bench --pin [--quick] [--repeats N]\n"
        "       ferry-bench --distance [--quick] [--repeats N]\n"
        "       ferry-bench --wake [--quick]\n"
        "\n"
        "The mechanism laboratory: seed-000's benchmarks (1-byte latency,\n"
        "bandwidth 1 B - 16 MiB, set-up/tear-down, cache disturbance,\n"
        "overlap, copy routines, buffer/cell size) over every transfer\n"
        "mechanism Ferry has. Runs its own pair of processes, or under\n"
        "`mpiexec -n 2`. A progress line goes to stderr.\n"
        "\n"
        "  --quick        fewer sizes and repeats (under a minute on 2 cores)\n"
        "  --out DIR      write DIR/report.md, DIR/results.json and PNG plots\n"
        "                 (default: the report on stdout, no plots)\n"
        "  --tune         measure the crossovers (eager cell vs each\n"
        "                 rendezvous mechanism, fastest mechanism per size)\n"
        "                 and write a tuning file: --out FILE, else\n"
        "                 $FERRY_TUNING, else\n"
        "                 ${XDG_CONFIG_HOME:-$HOME/.config}/ferry/tuning.conf\n"
        "  --protocols    only seed 001's early/late receiver test\n"
        "                 (bench_earlylate under mpiexec, once per\n"
        "                 FERRY_PROTO/BTP/RECV_WRITE setting; part of the\n"
        "                 full run and of --tune, not of --quick)\n"
        "  --no-protocols leave that experiment out\n"
        "  --ops          only the reduction kernels (MPI_SUM and others on\n"
        "                 4 KiB, 256 KiB, 8 MiB) against memcpy, in GB/s; a\n"
        "                 table on stdout, no second process\n"
        "  --coll         only the collectives (bench_coll under mpiexec at\n"
        "                 2, 3 and 4 ranks over sizes, once per algorithm\n"
        "                 setting: p2p, broadcast cells vs single copy,\n"
        "                 allreduce whole vs slices, cells vs direct) and\n"
        "                 their crossovers; with --tune, write coll_cma_min,\n"
        "                 coll_slice_min and coll_direct_min to the tuning\n"
        "                 file (its other keys kept)\n"
        "  --pin          only seed 004's pin-down cache: bandwidth of a\n"
        "                 transfer loop that pins (mlock) its buffers at\n"
        "                 100 %% and 0 %% cache hits, 4 KiB - 4 MiB, and the\n"
        "                 cache's counters; a section on stdout, one process\n"
        "                 (also part of every other run's report, not --tune)\n"
        "  --distance     only the copy rate against the distance between\n"
        "                 destination and source modulo 4096 (memcpy, the\n"
        "                 library's fy_copy, cma direct and bounced), 4 KiB -\n"
        "                 1 MiB; a table on stdout, one process\n"
        "  --wake         only the hand-over of the core to a waiting\n"
        "                 process: spinning on a flag across cores, a futex\n"
        "                 sleeper woken on an idle and on a busy core, and\n"
        "                 two processes on one core that yield or sleep (how\n"
        "                 a rank waits: FERRY_WAIT); a table on stdout\n"
        "                 (also part of every other run's report, not\n"
        "                 --tune)\n"
        "  --only LIST    measure only these mechanisms (comma list of names\n"
        "                 or labels: cma,shmbuf,\"cma get\",ptrace-attach)\n"
        "  --repeats N    repeats per figure (default 7, quick 5; max %d)\n"
        "  --no-plots     do not run the plot script\n"
        "\n"
        "Environment: FERRY_SHMBUF_SIZE, FERRY_CELL_SIZE and FERRY_EAGER_MAX\n"
        "set the library settings the laboratory measures with;\n"
        "FERRY_PYTHON the Python for the plots (default /usr/bin/python3,\n"
        "then python3), FERRY_LAB_PLOT the plot script.\n",
        LAB_MAX_REPEATS);
}

static int parse_opts(struct lab_opts *o, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"quick", no_argument, NULL, 'q'},
        {"out", required_argument, NULL, 'o'},
        {"tune", no_argument, NULL, 't'},
        {"ops", no_argument, NULL, 'S'},
        {"coll", no_argument, NULL, 'C'},
        {"pin", no_argument, NULL, 'K'},
        {"distance", no_argument, NULL, 'D'},
        {"wake", no_argument, NULL, 'W'},
        {"only", required_argument, NULL, 'O'},
        {"repeats", required_argument, NULL, 'r'},
        {"no-plots", no_argument, NULL, 'P'},
        {"protocols", no_argument, NULL, 'p'},
        {"no-protocols", no_argument, NULL, 'N'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof(*o));
    int c;
    while ((c = getopt_long(argc, argv, "qo:tO:r:PhSpNCKDW", longopts, NULL)) !=
           -1) {
        switch (c) {
        case 'q':
            o->quick = true;
            break;
        case 'o':
            o->out = optarg;
            break;
        case 't':
            o->tune = true;
            break;
        case 'S':
            o->ops = true;
            break;
        case 'C':
            o->coll = true;
            break;
        case 'K':
            o->pin = true;
            break;
        case 'D':
            o->distance = true;
            break;
        case 'W':
            o->wake = true;
            break;
        case 'O':
            o->only = optarg;
            break;
        case 'r': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > LAB_MAX_REPEATS) {
                fprintf(stderr, "ferry-bench: --repeats %s: expected 1 to %d\n",
                        optarg, LAB_MAX_REPEATS);
                return -1;
            }
            o->repeats = (int)v;
            break;
        }
        case 'P':
            o->no_plots = true;
            break;
        case 'p':
            o->protocols = true;
            break;
        case 'N':
            o->no_protocols = true;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            usage(stderr);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ferry-bench: unexpected argument '%s'\n",
                argv[optind]);
        usage(stderr);
        return -1;
    }
    if (o->protocols && (o->tune || o->no_protocols || o->ops || o->only)) {
        fprintf(stderr, "ferry-bench: --protocols goes with --quick, --out, "
                        "--repeats and --no-plots only\n");
        return -1;
    }
    if (o->coll && (o->protocols || o->no_protocols || o->ops || o->only)) {
        fprintf(stderr, "ferry-bench: --coll goes with --quick, --tune, "
                        "--out and --repeats only\n");
        return -1;
    }
    if (o->wake && (o->tune || o->out || o->only || o->ops || o->coll ||
                    o->pin || o->distance || o->protocols)) {
        fprintf(stderr, "ferry-bench: --wake goes with --quick only\n");
        return -1;
    }
    if (!o->repeats)
        o->repeats = o->quick ? 5 : 7;
    return 0;
}

static int mkdir_p(const char *dir)
{
    char p[4096];
    snprintf(p, sizeof(p), "%s", dir);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST)
            return -errno;
        *s = '/';
    }
    if (mkdir(p, 0755) != 0 && errno != EEXIST)
        return -errno;
    return 0;
}

/* Run the plot script; returns its exit status (3: no matplotlib), or -1
 * if no Python could be started. */
static int run_plots(const char *json, const char *dir, char *py_used,
                     size_t pylen)
{
    const char *script = getenv("FERRY_LAB_PLOT");
    if (!script || !*script)
        script = FERRY_LAB_PLOT;
    const char *env_py = getenv("FERRY_PYTHON");
    /* Debian's python3-matplotlib is for /usr/bin/python3; a python3
     * earlier in PATH (pyenv, a venv) may not see it. */
    const char *cands[] = {env_py && *env_py ? env_py : NULL,
                           "/usr/bin/python3", "python3"};
    int last = -1;
    for (size_t i = 0; i < FY_ARRAY_LEN(cands); i++) {
        if (!cands[i])
            continue;
        if (cands[i][0] == '/' && access(cands[i], X_OK) != 0)
            continue;
        char *argv[] = {(char *)cands[i], (char *)script, (char *)json,
                        (char *)dir, NULL};
        /* The script lists what it wrote on stdout: not for our users. */
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        pid_t pid;
        int src = posix_spawnp(&pid, cands[i], &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (src != 0)
            continue;
        int st = 0;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        last = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
        snprintf(py_used, pylen, "%s", cands[i]);
        if (last == 0)
            return 0;
        if (last != 3)
            return last; /* a real failure: do not try another Python */
    }
    return last;
}

static void load_library_settings(struct lab *L)
{
    if (fy_env_load() != 0)
        exit(2); /* the malformed FERRY_* variable was named */
    L->lib_shmbuf = (size_t)fy_env_int(FY_ENV_SHMBUF_SIZE);
    L->lib_cell = (size_t)fy_env_int(FY_ENV_CELL_SIZE);
    L->lib_eager = (size_t)fy_env_int(FY_ENV_EAGER_MAX);
    if (L->lib_shmbuf < 1024 || L->lib_shmbuf > LAB_MAX_SHMBUF ||
        L->lib_shmbuf % FY_CACHELINE) {
        fprintf(stderr,
                "ferry-bench: FERRY_SHMBUF_SIZE=%zu: the laboratory "
                "supports 1 KiB to 4 MiB, multiples of 64\n",
                L->lib_shmbuf);
        exit(2);
    }
    if (L->lib_cell < 1024 || L->lib_cell > LAB_MAX_CELL ||
        L->lib_cell % FY_CACHELINE) {
        fprintf(stderr,
                "ferry-bench: FERRY_CELL_SIZE=%zu: expected 1 KiB to "
                "1 MiB, multiple of 64\n",
                L->lib_cell);
        exit(2);
    }
    if (L->lib_eager > L->lib_cell - FY_CELL_HDR)
        L->lib_eager = L->lib_cell - FY_CELL_HDR;
}

/* report.md + results.json + plots (or the report on stdout). */
static int write_outputs(struct lab *L)
{
    if (!L->opt.out) {
        return lab_write_report(L, stdout,
                                "Run with `--out DIR` to get results.json and "
                                "the plots.\n",
                                NULL)
                   ? 1
                   : 0;
    }
    char json[4096], md[4096];
    snprintf(json, sizeof(json), "%s/results.json", L->opt.out);
    snprintf(md, sizeof(md), "%s/report.md", L->opt.out);
    int rc = lab_write_json(L, json);
    if (rc) {
        fprintf(stderr, "ferry-bench: cannot write %s: %s\n", json,
                strerror(-rc));
        return 1;
    }
    /* Plots, then the report that lists them (or says how to get them). */
    char note[4096] = "", py[256] = "";
    int prc =
        L->opt.no_plots ? -2 : run_plots(json, L->opt.out, py, sizeof(py));
    if (prc == 0) {
        size_t n = 0;
        for (size_t i = 0; i < FY_ARRAY_LEN(plot_files); i++) {
            char p[4200];
            snprintf(p, sizeof(p), "%s/%s", L->opt.out, plot_files[i]);
            if (access(p, R_OK) == 0)
                n += (size_t)snprintf(note + n, sizeof(note) - n,
                                      "![%s](%s)\n\n", plot_files[i],
                                      plot_files[i]);
        }
    } else {
        snprintf(note, sizeof(note),
                 "No plots were made (%s). To make them: install matplotlib "
                 "(Debian: `apt-get install python3-matplotlib`) and run "
                 "`/usr/bin/python3 bench/lab/plot.py %.900s %.900s`.\n",
                 prc == -2   ? "--no-plots"
                 : prc == 3  ? "matplotlib is not installed"
                 : prc == -1 ? "no Python 3 found"
                             : "the plot script failed",
                 json, L->opt.out);
    }
    FILE *f = fopen(md, "w");
    if (!f || lab_write_report(L, f, note, L->opt.out) != 0 || fclose(f) != 0) {
        fprintf(stderr, "ferry-bench: cannot write %s: %s\n", md,
                strerror(errno));
        return 1;
    }
    fprintf(stderr, "ferry-bench: wrote %s, %s%s in %.0f s\n", md, json,
            prc == 0 ? " and the plots" : " (no plots)", lab_res.elapsed_s);
    return 0;
}

static struct lab lab;

int main(int argc, char **argv)
{
    struct lab *L = &lab;
    if (parse_opts(&L->opt, argc, argv))
        return 2;
    if (L->opt.ops) /* a single-process measurement: no set-up */
        return lab_ops_run(&L->opt, stdout);
    if (L->opt.coll) { /* jobs of their own: no second process */
        lab_proto_save_affinity();
        return lab_coll_run(&L->opt, stdout);
    }
    if (L->opt.pin) /* one process too */
        return lab_pin_run(&L->opt, stdout);
    if (L->opt.distance) /* and this */
        return lab_distance_run(&L->opt, stdout);
    if (L->opt.wake) /* processes of its own */
        return lab_wake_run(&L->opt, stdout);
    load_library_settings(L);
    lab_copies_init();

    /* Resolve the tuning file's path before spending minutes measuring. */
    char tune_path[512] = "";
    if (L->opt.tune) {
        if (L->opt.out)
            snprintf(tune_path, sizeof(tune_path), "%s", L->opt.out);
        else if (fy_tuning_default_path(tune_path, sizeof(tune_path)) != 0) {
            fprintf(stderr, "ferry-bench: no place for the tuning file: set "
                            "FERRY_TUNING or HOME, or pass --out FILE\n");
            return 2;
        }
    } else if (L->opt.out && mkdir_p(L->opt.out) != 0) {
        fprintf(stderr, "ferry-bench: cannot create %s: %s\n", L->opt.out,
                strerror(errno));
        return 2;
    }

    lab_idle_sample();
    lab_proto_save_affinity();
    if (L->opt.protocols) {
        /* No second process: the jobs are the experiment. */
        L->t_start = (double)lab_now_ns() / 1e9;
        lab_machine_info(L, true);
        lab_exp_protocols(L);
        lab_progress_done(L);
        lab_machine_info(L, false);
        if (!lab_proto.done)
            fprintf(stderr, "ferry-bench: protocols not measured: %s\n",
                    lab_proto.why);
        else if (!lab_proto.verified) {
            fprintf(stderr, "ferry-bench: a job received wrong bytes\n");
        }
        return write_outputs(L) || !lab_proto.done || !lab_proto.verified;
    }
    if (lab_setup(L, argc, argv) != 0)
        return 1;
    if (L->me == 0)
        lab_machine_info(L, true);
    lab_mechs_discover(L);
    lab_sb_config(L, L->lib_shmbuf);
    lab_queue_config(L, (uint32_t)L->lib_cell);
    L->copy = NULL;

    lab_exp_clock(L);
    lab_progress(L, "verify: every mechanism once, byte for byte");
    lab_mechs_verify(L);
    if (!L->opt.tune) {
        lab_exp_latency(L);
        lab_exp_bandwidth(L);
        lab_exp_setup(L);
        lab_exp_cache(L);
        lab_exp_overlap(L);
        lab_exp_memcpy(L);
        lab_exp_sweeps(L);
    }
    lab_exp_tune(L);
    lab_progress_done(L);
    if (L->me == 0)
        lab_machine_info(L, false);
    lab_finish(L); /* P1 leaves here */
    /* Seed 001's protocols: whole jobs of their own, so only once P1 has
     * left the second core. */
    if (!L->opt.tune) {
        lab_exp_pin(&L->opt);  /* one process: P1 has left */
        lab_exp_wake(&L->opt); /* processes of its own */
    }
    if (!L->opt.tune && !L->opt.quick)
        lab_exp_distance(&L->opt); /* and this */
    if (!L->opt.no_protocols && (L->opt.tune || !L->opt.quick)) {
        lab_exp_protocols(L);
        lab_progress_done(L);
        if (!lab_proto.done)
            fprintf(stderr, "ferry-bench: protocols not measured: %s\n",
                    lab_proto.why);
        lab_machine_info(L, false);
    }

    if (L->opt.tune) {
        lab_print_tune(L, stdout, true);
        lab_proto_print_choice(stdout);
        int rc = lab_write_tuning(L, tune_path);
        if (rc) {
            fprintf(stderr, "ferry-bench: cannot write %s: %s\n", tune_path,
                    strerror(-rc));
            return 1;
        }
        printf("\nwrote %s (%.0f s)\n", tune_path, lab_res.elapsed_s);
        return 0;
    }

    return write_outputs(L);
}
