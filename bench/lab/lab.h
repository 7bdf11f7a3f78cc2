/* SPDX-License-Identifier: MIT */
/* ferry-bench, the mechanism laboratory: seed-000's common benchmarking
 * infrastructure over every mechanism in fy_xfer_registry. Two processes
 * (the source P0 and the destination P1) share one memfd segment laid out
 * here, run the same sequence of experiments in lockstep separated by a
 * two-party barrier, and P0 collects every figure. */
#ifndef FY_LAB_H
#define FY_LAB_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "shm/cellq_inl.h"
#include "shm/shm.h"
#include "xfer/shm_layout.h"
#include "xfer/xfer.h"

#define LAB_MAX_MSG (16u << 20)   /* largest transfer measured */
#define LAB_MAX_SHMBUF (4u << 20) /* largest double-buffer half swept */
#define LAB_MAX_CELL (1u << 20)   /* largest cell swept (header included) */
#define LAB_NCELLS 64u            /* cells per process, as the library */
#define LAB_MBOX 4096u            /* P1 -> P0 result slots */
#define LAB_MAX_MECHS 16
#define LAB_MAX_REPEATS 15

/* ---- the shared segment ---------------------------------------------------
 * Invariants:
 * - ep[i] is written only by process i (release) and read by the other
 *   (acquire): the barrier. Everything a process wrote before arriving is
 *   visible to the other after it leaves.
 * - go is written only by P0 (RTS-like requests), back only by P1
 *   (CTS/FIN-like answers); each carries a sequence number published with
 *   release after the payload fields, read with acquire.
 * - mbox is written by P1 between two barriers and read by P0 after the
 *   second one: the barrier orders it, no atomics needed.
 * - mech_ok[] starts at 1 (P0 sets it before the first barrier) and each
 *   side may only clear entries: verdicts meet after a barrier. */
struct lab_line {
    alignas(FY_CACHELINE) _Atomic uint64_t seq;
    uint64_t addr, len, aux;
};

struct lab_hdr {
    uint64_t magic;
    uint32_t version;
    _Atomic uint32_t state; /* 2: P0 has laid the segment out */
    uint64_t total;
    int32_t pid[2];
    uint64_t pool[2]; /* each process' buffer pool base address */
    uint64_t off_q, off_sb, off_cells;
    uint32_t net_port; /* P1's listening port for the net driver */
    uint64_t net_key;  /* P1's listener key (the library's hello checks it) */
    alignas(FY_CACHELINE) _Atomic uint64_t ep[2][8]; /* [i][0] only; padded */
    alignas(FY_CACHELINE) _Atomic uint32_t abort_flag;
    alignas(FY_CACHELINE) _Atomic uint32_t mech_ok[LAB_MAX_MECHS];
    struct lab_line go;   /* P0 -> P1 */
    struct lab_line back; /* P1 -> P0 */
    alignas(FY_CACHELINE) uint64_t mbox[LAB_MBOX];
};

/* The queues live after the header as the library's own "cellq" region
 * (a queue pair per process, so the library's link validation, which
 * accepts only cells and the stubs of queue pairs, holds here too): P1's
 * receive queue and P0's free queue are the ones used (data flows P0 ->
 * P1). Then P1's shared-copy control block ("cma split"). */
struct lab_queues {
    struct fy_cellq_pair rank[2];
    struct fy_split_ctl split; /* P1's */
};

#define LAB_MAGIC 0x4665727279424c41ull /* "FerryBLA" */
#define LAB_VERSION 3u

/* ---- mechanisms as the laboratory drives them ---------------------------- */

enum lab_kind {
    LAB_GET,    /* one-sided: P1 reads P0's buffer (copy_remote, get) */
    LAB_PUT,    /* one-sided: P0 writes P1's buffer (copy_remote, put) */
    LAB_ATTACH, /* the seed's ptrace: stop P0, read /proc/pid/mem, detach */
    LAB_SHMBUF, /* two-sided: double buffer with full/empty flags */
    LAB_QUEUE,  /* two-sided: cells through P1's receive queue */
    LAB_NET,    /* two-sided: TCP over loopback */
    LAB_SPLIT,  /* cma, both sides: the shared single copy (xfer/split.c) */
};

struct lab_mech {
    char label[32];                /* "cma get", "shmbuf", ... */
    const struct fy_xfer_ops *ops; /* its registry entry */
    int xkind;                     /* enum fy_xfer_kind */
    enum lab_kind kind;
    bool ok;       /* works between our two processes */
    char why[256]; /* why not, or a note */
};

/* Copy routines (Fig. 2): libc memcpy, rep movsb, AVX2 non-temporal. */
typedef void (*lab_copy_fn)(void *dst, const void *src, size_t len);
struct lab_copy {
    const char *name;
    lab_copy_fn fn;
    bool ok;
    const char *why;
};
extern struct lab_copy lab_copies[3];
void lab_copies_init(void);

struct lab_opts {
    bool quick, tune, no_plots, verbose, ops;
    bool coll;         /* --coll: only the collective sweep */
    bool pin;          /* --pin: only the pin-down cache experiment */
    bool distance;     /* --distance: only the copy rate by distance */
    bool wake;         /* --wake: only the hand-over of the core */
    bool protocols;    /* --protocols: only the early/late experiment */
    bool no_protocols; /* --no-protocols: never it */
    const char *out;   /* report directory, or tuning file with --tune */
    const char *only;  /* comma list of mechanism labels, or NULL */
    const char *plot_script;
    int repeats;
};

/* Process-local state. */
struct lab {
    int me; /* 0: source P0, 1: destination P1 */
    bool standalone;
    pid_t peer;
    int fd;
    uint8_t *base;
    struct lab_hdr *h;
    struct lab_queues *q;
    uint64_t epoch;
    uint64_t go_seq, back_seq;
    /* Buffer pool: two regions of region_size; data moves from region 0
     * of P0 to region 0 of P1; region 1 serves local copies and cache
     * eviction. */
    uint8_t *pool;
    uint64_t peer_pool;
    size_t region_size;
    size_t rot; /* rotating offset into region 0 (and 1, in step) */
    size_t l1, l2, l3, line;
    /* Two-sided drivers' state. */
    size_t sb_size;            /* double-buffer half in use */
    uint32_t sb_half;          /* next half (both sides keep it in step) */
    uint32_t cell_size;        /* cell size in use, header included */
    uint64_t recv_tail;        /* P1: cursor of its receive queue */
    uint64_t free_tail;        /* P0: cursor of its free queue */
    lab_copy_fn copy;          /* copy routine of the two-sided drivers */
    lab_copy_fn copy_override; /* experiments: replaces ops->copy_local */
    size_t rot_local;          /* rotation of process-local experiments */
    bool net_up;               /* the net driver's endpoints are connected */
    uint64_t net_cookie;       /* names each net message (both in step) */
    uint32_t split_gen;        /* P1: generations of the shared copy */
    struct lab_opts opt;
    struct lab_mech mech[LAB_MAX_MECHS];
    int nmech;
    /* Library defaults the tests use unless sweeping. */
    size_t lib_shmbuf, lib_cell, lib_eager;
    double t_start;
};

/* ---- seg.c: processes, segment, barrier, buffers ------------------------ */
int lab_setup(struct lab *L, int argc, char **argv);
void lab_finish(struct lab *L);
void lab_barrier(struct lab *L);
_Noreturn void lab_die(struct lab *L, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
uint64_t lab_now_ns(void);
size_t lab_rot_next(struct lab *L, size_t len);
void lab_progress(struct lab *L, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void lab_progress_done(struct lab *L);
void lab_bind_cpu(int idx);
/* One wait for the peer, as a spin loop: call lab_wait_step once per poll
 * that found nothing, starting each wait with a zeroed struct lab_wait
 * (and zeroing it again whenever the wait made progress). Every few
 * thousand polls it leaves if the peer died or gave up, yields once the
 * wait drags on (a loaded machine), and ends the run after 300 s of this
 * one wait. */
struct lab_wait {
    unsigned spins, rounds;
    uint64_t since; /* first check of this wait (ns), 0 before */
};
void lab_wait_check(struct lab *L, struct lab_wait *w);
static inline void lab_wait_step(struct lab *L, struct lab_wait *w)
{
    fy_cpu_relax();
    if ((++w->spins & 0x3fff) == 0)
        lab_wait_check(L, w);
}
void lab_wait_seq(struct lab *L, _Atomic uint64_t *seq, uint64_t want);
void lab_wait_u32(struct lab *L, _Atomic uint32_t *p, uint32_t want);

/* ---- drivers.c: one transfer of each kind -------------------------------- */
void lab_mechs_discover(struct lab *L);
void lab_mechs_verify(struct lab *L);
void lab_sb_config(struct lab *L, size_t half);
void lab_queue_config(struct lab *L, uint32_t cell_size);
int lab_net_open(struct lab *L);
void lab_net_close(struct lab *L);
/* One transfer of len bytes at pool offset off, run by both processes.
 * rndv adds the rendezvous handshake in front (RTS, and CTS for the
 * two-sided kinds). Returns, in P0 after lab_xfer_collect, the sample. In
 * P0 writes *t0_out (start, ns) for kinds P0 starts; P1 writes its end or
 * duration into mbox[slot]. */
void lab_xfer_once(struct lab *L, const struct lab_mech *m, size_t len,
                   bool rndv, unsigned slot, uint64_t *p0_stamp);
/* After a barrier: P0 turns stamps and mbox into durations (us). */
double lab_xfer_sample(struct lab *L, const struct lab_mech *m, bool rndv,
                       unsigned slot, uint64_t p0_stamp);
/* Request/answer lines: P0 -> P1 (go) and P1 -> P0 (back). */
void lab_send_go(struct lab *L, uint64_t addr, uint64_t len);
void lab_wait_go(struct lab *L);
void lab_send_back(struct lab *L);
void lab_wait_back(struct lab *L);
/* Same rule as lab_rot_next on a process-local counter. */
size_t lab_rot_local(struct lab *L, size_t len);
void lab_fill_pattern(uint8_t *p, size_t len, unsigned salt);
bool lab_check_pattern(const uint8_t *p, size_t len, unsigned salt);

/* ---- stats ----------------------------------------------------------------
 */
/* Sort v ascending (in place). */
void lab_sort(double *v, int n);
double lab_median(double *v, int n);

/* ---- ops.c: --ops, the reduction kernels against memcpy (one process) -- */
int lab_ops_run(const struct lab_opts *o, FILE *out);
/* ---- distance.c: --distance, copy rate by distance (one process) ------ */
int lab_distance_run(const struct lab_opts *o, FILE *out);
/* The same section, measured during a full (not --quick) run after the
 * second process left, for report.md; NULL when not measured. */
extern char *lab_distance_section;
void lab_exp_distance(const struct lab_opts *o);

/* ---- wake.c: --wake, handing the core to a waiting process ------------ */
int lab_wake_run(const struct lab_opts *o, FILE *out);
/* The same section, measured during a full or --quick run (not --tune)
 * after the second process left, on the CPUs the laboratory started
 * with, for report.md; NULL when not measured. */
extern char *lab_wake_section;
void lab_exp_wake(const struct lab_opts *o);

/* ---- protocols.c: jobs under Ferry's mpiexec ---------------------------- */
/* The executable 'name' next to ferry-bench, into out; false if none. */
bool lab_find_tool(char *out, size_t len, const char *name);
/* Run `mpiexec --timeout S -n np args...` with env (';'-separated
 * NAME=VALUE added to ours, the launcher's and the measured settings'
 * own variables scrubbed) and FERRY_TUNING=tuning; its stdout into *out
 * (malloc'd), the last line of its stderr into err. Returns the exit
 * status, or -1 if it could not start. */
int lab_run_mpi(const char *mpiexec, int np, char *const *args, const char *env,
                const char *tuning, int timeout, char **out, char *err,
                size_t errlen);

/* ---- coll.c: ferry-bench --coll ------------------------------------------ */
/* The library's collectives under mpiexec at 2 and 4 ranks over sizes,
 * once per algorithm setting; the crossovers, and with o->tune the
 * tuning file's coll_* keys (o->out, else the default path). Returns the
 * exit status for main. */
int lab_coll_run(const struct lab_opts *o, FILE *out);
/* ---- pin.c: --pin, seed 004's pin-down cache at 100 % and 0 % hits ---- */
int lab_pin_run(const struct lab_opts *o, FILE *out);
/* The same section, measured during a full run (after the second process
 * left) for report.md; NULL when not measured. */
extern char *lab_pin_section;
void lab_exp_pin(const struct lab_opts *o);
/* The output of run(o, ...) as a string for report.md, after 'heading'
 * (NULL: none); NULL if it failed. */
char *lab_capture(int (*run)(const struct lab_opts *, FILE *),
                  const struct lab_opts *o, const char *heading);
double lab_trimmed_mean(double *v, int n); /* middle 80% (seed 001, sec. 5) */

/* Measured figure: median over repeats of each repeat's trimmed mean. */
struct lab_fig {
    double value; /* us */
    double min;   /* fastest single sample, us */
    int nrep;
    double rep[LAB_MAX_REPEATS];
    bool valid;
};

/* Run (warm-up +) repeats x iters transfers of len bytes; P0 gets the
 * figure, P1 gets an undefined one. */
struct lab_fig lab_measure(struct lab *L, const struct lab_mech *m, size_t len,
                           bool rndv, int iters, int repeats);
int lab_iters_for(const struct lab *L, size_t len);

/* ---- everything measured (P0's copy is the authoritative one) ------------ */

#define LAB_MAX_SIZES 32
#define LAB_MAX_CACHE_SIZES 8
#define LAB_MAX_SWEEP 16
#define LAB_MAX_TUNE 48

struct lab_setup_row {
    char mech[32];  /* mechanism (label) */
    char what[112]; /* what was timed */
    char note[200];
    double setup_us, teardown_us;
    double setup_touch_us; /* < 0: not applicable */
    bool region_specific;
    bool measured; /* figures are measurements */
    bool nothing;  /* nothing to set up: 0 by construction */
};

struct lab_cache_cal {
    double warm_ns, cold_ns, per_line_ns;
    double dram_ns; /* re-read after clflush of every line (from DRAM) */
    int lines;
};

struct lab_cache_res {
    bool valid;
    double ns[2];    /* median re-read time after the transfer: src, dst */
    double lines[2]; /* estimated lines evicted: src, dst */
    /* Re-reads slower than the L3-cold calibration: the share of the
     * buffer that had to come from DRAM (0 when lines <= the buffer). */
    double dram_share[2];
    double ref_ns[2]; /* the cell's own no-transfer re-read: src, dst */
    double noise;     /* how far ref strays from the warm calibration, lines */
};

struct lab_overlap {
    bool measured;
    size_t bytes;
    double xfer_us;  /* the transfer alone */
    double alone_us; /* the passive side's compute alone */
    double with_us;  /* the same compute during the transfer */
    double lost_us;  /* with - alone */
};

struct lab_tune {
    bool done;
    int ne;
    size_t e_sizes[LAB_MAX_TUNE];
    double eager_us[LAB_MAX_TUNE];
    int nr;
    size_t r_sizes[LAB_MAX_TUNE];
    bool r_used[LAB_MAX_MECHS];
    double rndv_us[LAB_MAX_MECHS][LAB_MAX_TUNE];
    uint64_t eager_max;
    bool eager_limited; /* eager won up to the cell's payload */
    /* The shared single copy: measured (cma get and cma split both ran),
     * and from which size the library should use it (0: never). */
    bool split_measured;
    uint64_t split_min;
    int nrules;
    struct {
        uint64_t min;
        int mech; /* index into lab.mech */
    } rules[FY_XFER_RULES_MAX];
    char path[512];
    bool saved;
    char save_err[160];
};

struct lab_results {
    char host[64], cpu[128], kernel[160], clocksource[32], date[40];
    char virt[64];
    int ncpus;
    double load_start[3], load_end[3];
    /* From /proc/stat: CPU idle share in the second before the run, and
     * the host's steal share before and during it (-1: unknown). */
    double idle_before, steal_before, steal_during;
    unsigned long long stat_start[2]; /* total, steal jiffies at start */
    double elapsed_s;
    double line_oneway_us, line_rtt_us, skew_us;
    struct lab_fig lat[LAB_MAX_MECHS];
    int nsizes;
    size_t sizes[LAB_MAX_SIZES];
    struct lab_fig bw[LAB_MAX_MECHS][LAB_MAX_SIZES];
    int nsetup;
    struct lab_setup_row setup[LAB_MAX_MECHS + 4];
    struct lab_cache_cal cal[2];
    int ncache;
    size_t cache_sizes[LAB_MAX_CACHE_SIZES];
    struct lab_cache_res cache[LAB_MAX_MECHS + 1][LAB_MAX_CACHE_SIZES];
    struct lab_cache_res cache_none; /* no transfer in either pass */
    int cache_attempts;              /* cell measurements made in all */
    double cache_noise;              /* worst kept cell's disturbance */
    int cache_noisy_cells;           /* kept cells still above 10% */
    struct lab_overlap ovl[LAB_MAX_MECHS];
    int nmc;
    size_t mc_sizes[LAB_MAX_SIZES];
    double mc_ns[3][LAB_MAX_SIZES]; /* per copy */
    int nsb, nq;
    size_t sb_sizes[LAB_MAX_SWEEP], q_sizes[LAB_MAX_SWEEP];
    double sb_us[LAB_MAX_SWEEP], q_us[LAB_MAX_SWEEP];
    size_t sweep_bytes;
    /* Two-sided drivers with each copy routine: [shmbuf, queue][copy][size] */
    size_t tsc_sizes[2];
    double tsc_us[2][3][2];
    struct lab_tune tune;
};

extern struct lab_results lab_res;

/* ---- experiments.c ----------------------------------------------------------
 */
void lab_exp_clock(struct lab *L);
void lab_exp_latency(struct lab *L);
void lab_exp_bandwidth(struct lab *L);
void lab_exp_setup(struct lab *L);
void lab_exp_cache(struct lab *L);
void lab_exp_overlap(struct lab *L);
void lab_exp_memcpy(struct lab *L);
void lab_exp_sweeps(struct lab *L);
void lab_exp_tune(struct lab *L);
bool lab_mech_one_sided(const struct lab_mech *m);
/* The mechanism's figure at 'bytes' from the bandwidth sweep, or NULL. */
const struct lab_fig *lab_bw_at(const struct lab *L, int mech, size_t bytes);

/* ---- report.c
 * ----------------------------------------------------------------- */
void lab_machine_info(struct lab *L, bool at_start);
/* Sample /proc/stat for a second (call before any process spins). */
void lab_idle_sample(void);
int lab_write_json(struct lab *L, const char *path);
int lab_write_report(struct lab *L, FILE *f, const char *plots_note,
                     const char *dir);
int lab_write_tuning(struct lab *L, const char *path);
void lab_print_tune(struct lab *L, FILE *f, bool settings);
const char *lab_size_str(size_t n, char *buf, size_t len);

/* ---- protocols.c: seed 001's early/late receivers per protocol setting -- */
#define LAB_PROTO_MAX 12
enum lab_proto_kind {
    LAB_PROTO_AUTO,
    LAB_PROTO_PUSHZERO,
    LAB_PROTO_PUSHPULL,
    LAB_PROTO_PUSHALL,
    LAB_PROTO_WRITE
};
struct lab_proto_res {
    bool done, quick, verified;
    char why[300];  /* why not measured */
    char fail[400]; /* first failed job */
    int jobs, failed, repeats;
    double seconds;
    uint64_t eager;
    int nset;
    char label[LAB_PROTO_MAX][24];
    char env[LAB_PROTO_MAX][160];
    enum lab_proto_kind kind[LAB_PROTO_MAX];
    uint64_t btp[LAB_PROTO_MAX];
    bool main[LAB_PROTO_MAX]; /* in the early/late tables */
    int nsizes;
    size_t sizes[LAB_MAX_SIZES];
    /* [setting][early, late][size]: us; < -1e29: missing */
    double comm[LAB_PROTO_MAX][2][LAB_MAX_SIZES];
    double t[LAB_PROTO_MAX][2][LAB_MAX_SIZES];
    double order_ok[LAB_PROTO_MAX][2][LAB_MAX_SIZES];
    double rep_comm[LAB_PROTO_MAX][2][LAB_MAX_SIZES][LAB_MAX_REPEATS];
    double rep_t[LAB_PROTO_MAX][2][LAB_MAX_SIZES][LAB_MAX_REPEATS];
    double x_us[2][LAB_MAX_SIZES], y_us[2][LAB_MAX_SIZES];
    /* The choice. */
    int btp_set, proto_set; /* indices, -1: none */
    double btp_score[LAB_PROTO_MAX], worst[LAB_PROTO_MAX];
    bool rw_measured;
    int recv_write;
    uint64_t recv_write_min;
    double rw_ratio;
};
extern struct lab_proto_res lab_proto;
struct fy_tuning;
/* Call before the laboratory pins P0: the jobs get the CPUs back. */
void lab_proto_save_affinity(void);
/* Give this process the saved CPUs back for a while (nothing if none
 * were saved), and its pinning again after. */
void lab_proto_unpin(void);
void lab_proto_repin(void);
/* P0 only, with P1 gone: runs the jobs and makes the choice. */
void lab_exp_protocols(struct lab *L);
void lab_proto_write_json(FILE *f); /* "protocols": {...} */
void lab_proto_write_md(FILE *f);   /* the report section */
void lab_proto_print_choice(FILE *f);
void lab_proto_tuning(struct fy_tuning *out); /* adds the chosen keys */

#endif /* FY_LAB_H */
