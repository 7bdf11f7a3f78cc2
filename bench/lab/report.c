/* SPDX-License-Identifier: MIT */
/* What the laboratory writes: results.json (every raw figure, keys
 * documented in bench/README.md and in the file's own "_doc"), report.md
 * (the seed's Table V summary first, then every table), and the tuning
 * file of --tune. Only P0 calls these. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "lab.h"
#include "util/tuning.h"

const char *lab_size_str(size_t n, char *buf, size_t len)
{
    if (n >= (1u << 20) && n % (1u << 20) == 0)
        snprintf(buf, len, "%zu MiB", n >> 20);
    else if (n >= 1024 && n % 1024 == 0)
        snprintf(buf, len, "%zu KiB", n >> 10);
    else if (n >= (1u << 20))
        snprintf(buf, len, "%.1f MiB", (double)n / 1048576.0);
    else if (n >= 1024)
        snprintf(buf, len, "%.1f KiB", (double)n / 1024.0);
    else
        snprintf(buf, len, "%zu B", n);
    return buf;
}

static double mibps(size_t bytes, double us)
{
    return us > 0 ? (double)bytes / 1048576.0 / (us / 1e6) : 0;
}

static void read_load(double out[3])
{
    FILE *f = fopen("/proc/loadavg", "r");
    out[0] = out[1] = out[2] = -1;
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &out[0], &out[1], &out[2]) != 3)
            out[0] = out[1] = out[2] = -1;
        fclose(f);
    }
}

/* The "cpu" line of /proc/stat: total, idle (+iowait) and steal. */
static bool read_stat(unsigned long long *total, unsigned long long *idle,
                      unsigned long long *steal)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return false;
    unsigned long long v[10] = {0};
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
                   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
                   &v[8], &v[9]);
    fclose(f);
    if (n < 8)
        return false;
    /* guest and guest_nice (8, 9) are already counted in user/nice. */
    *total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
    *idle = v[3] + v[4];
    *steal = v[7];
    return true;
}

void lab_idle_sample(void)
{
    struct lab_results *r = &lab_res;
    unsigned long long t0, i0, s0, t1, i1, s1;
    r->idle_before = r->steal_before = r->steal_during = -1;
    if (!read_stat(&t0, &i0, &s0))
        return;
    usleep(1000000);
    if (!read_stat(&t1, &i1, &s1) || t1 == t0)
        return;
    r->idle_before = 100.0 * (double)(i1 - i0) / (double)(t1 - t0);
    r->steal_before = 100.0 * (double)(s1 - s0) / (double)(t1 - t0);
    r->stat_start[0] = t1;
    r->stat_start[1] = s1;
}

void lab_machine_info(struct lab *L, bool at_start)
{
    struct lab_results *r = &lab_res;
    if (!at_start) {
        unsigned long long t, i, st;
        if (r->stat_start[0] && read_stat(&t, &i, &st) && t > r->stat_start[0])
            r->steal_during = 100.0 * (double)(st - r->stat_start[1]) /
                              (double)(t - r->stat_start[0]);
        read_load(r->load_end);
        r->elapsed_s = (double)lab_now_ns() / 1e9 - L->t_start;
        return;
    }
    read_load(r->load_start);
    gethostname(r->host, sizeof(r->host) - 1);
    r->ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof(line), f)) {
        if (!strncmp(line, "model name", 10)) {
            char *c = strchr(line, ':');
            if (c) {
                c += 2;
                c[strcspn(c, "\n")] = '\0';
                snprintf(r->cpu, sizeof(r->cpu), "%s", c);
            }
            break;
        }
    }
    if (f)
        fclose(f);
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(r->kernel, sizeof(r->kernel), "%s %s", u.sysname, u.release);
    f = fopen(
        "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        "r");
    if (f) {
        if (fgets(r->clocksource, sizeof(r->clocksource), f))
            r->clocksource[strcspn(r->clocksource, "\n")] = '\0';
        fclose(f);
    }
    snprintf(r->virt, sizeof(r->virt), "none detected");
#if defined(__x86_64__)
    unsigned a, b, c, d;
    __cpuid(1, a, b, c, d);
    if ((c >> 31) & 1) {
        /* The hypervisor's vendor string (leaf 0x40000000). */
        __cpuid(0x40000000, a, b, c, d);
        char v[13];
        memcpy(v, &b, 4);
        memcpy(v + 4, &c, 4);
        memcpy(v + 8, &d, 4);
        v[12] = '\0';
        snprintf(r->virt, sizeof(r->virt), "hypervisor \"%s\"", v);
    }
#endif
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(r->date, sizeof(r->date), "%Y-%m-%d %H:%M UTC", &tm);
}

/* ---- the summary's classifications ------------------------------------------
 */

static const char *kind_name(enum lab_kind k)
{
    switch (k) {
    case LAB_GET:
        return "one-sided get";
    case LAB_PUT:
        return "one-sided put";
    case LAB_ATTACH:
        return "one-sided get, peer stopped";
    case LAB_SHMBUF:
        return "two-sided double buffer";
    case LAB_QUEUE:
        return "two-sided cell queue";
    case LAB_NET:
        return "two-sided TCP loopback";
    case LAB_SPLIT:
        return "get shared with the source (both copy)";
    }
    return "?";
}

/* The seed's row for the same mechanism class, for side-by-side columns. */
struct seed_row {
    const char *name;
    double lat, bw, setup, teardown;
    const char *cache;
};

static const struct seed_row *seed_for(const struct lab_mech *m)
{
    static const struct seed_row rows[] = {
        {"Shared buffer", 1.5, 513.5, 10.9, 5.1, "High, Low"},
        {"Message queue", 3.3, 437.1, 10.9, 5.1, "High, High"},
        {"Kaput put", 2.1, 495.5, 2.8, 1.4, "High, Low"},
        {"Kaput get", 2.1, 500.3, 2.8, 1.4, "Low, High"},
        {"NIC-copy put", 11.6, 227.1, 4.5, 212.4, "Low, Low"},
        {"NIC-copy get", 14.3, 171.7, 4.5, 212.4, "Low, Low"},
        {"Ptrace", 20.2, 460.0, 0.0, 0.0, "Medium, High"},
    };
    switch (m->kind) {
    case LAB_SHMBUF:
        return &rows[0];
    case LAB_QUEUE:
        return &rows[1];
    case LAB_NET:
        return &rows[4];
    case LAB_ATTACH:
        return &rows[6];
    case LAB_GET:
    case LAB_PUT:
        if (m->xkind == FY_XFER_CMA)
            return &rows[m->kind == LAB_PUT ? 2 : 3];
        return NULL;
    case LAB_SPLIT:
        return NULL; /* not in the seed */
    }
    return NULL;
}

/* The cache row used for classification: 1 MiB (in both the quick and the
 * full runs). Lines evicted above the no-transfer floor, as a share of
 * the user buffer: < 10% Low, < 40% Medium, else High. */
static int cache_ref_index(void)
{
    for (int s = 0; s < lab_res.ncache; s++)
        if (lab_res.cache_sizes[s] == (1u << 20))
            return s;
    return lab_res.ncache - 1;
}

static const char *cache_class(int mech, int side, double *lines_out)
{
    int s = cache_ref_index();
    if (s < 0 || !lab_res.cache[mech][s].valid)
        return "n/a";
    double l = lab_res.cache[mech][s].lines[side];
    if (lines_out)
        *lines_out = l;
    double share = l / (double)lab_res.cal[side].lines;
    return share < 0.10 ? "Low" : share < 0.40 ? "Medium" : "High";
}

static const struct lab_setup_row *setup_for(const struct lab_mech *m)
{
    const char *want = m->kind == LAB_ATTACH ? "ptrace-attach" : m->ops->name;
    for (int i = 0; i < lab_res.nsetup; i++)
        if (!strcmp(lab_res.setup[i].mech, want))
            return &lab_res.setup[i];
    return NULL;
}

/* Throughput column: the 4 MiB figure (the seed's sweep size). */
static const struct lab_fig *fig_4m(const struct lab *L, int i)
{
    return lab_bw_at(L, i, 4u << 20);
}

static void peak_of(int i, double *mb, size_t *at)
{
    *mb = 0;
    *at = 0;
    for (int s = 0; s < lab_res.nsizes; s++) {
        const struct lab_fig *f = &lab_res.bw[i][s];
        if (!f->nrep || !f->valid)
            continue;
        double v = mibps(lab_res.sizes[s], f->value);
        if (v > *mb) {
            *mb = v;
            *at = lab_res.sizes[s];
        }
    }
}

struct quali {
    const char *overlap, *overlap_why;
    const char *permsg, *permsg_why;
    const char *active, *active_why;
    const char *passive, *passive_why;
};

static void qualify(const struct lab *L, int i, struct quali *q, char *buf,
                    size_t len)
{
    const struct lab_mech *m = &L->mech[i];
    const struct lab_overlap *o = &lab_res.ovl[i];
    memset(q, 0, sizeof(*q));
    switch (m->kind) {
    case LAB_GET:
    case LAB_PUT:
        if (o->measured) {
            bool yes = o->lost_us < 0.10 * o->xfer_us;
            snprintf(buf, len,
                     "the %s side computed during a %zu MiB transfer and "
                     "lost %.0f us of a %.0f us transfer",
                     m->kind == LAB_GET ? "source (passive)"
                                        : "destination (passive)",
                     o->bytes >> 20, o->lost_us, o->xfer_us);
            q->overlap = yes ? "Yes" : "No";
            q->overlap_why = buf;
        } else {
            q->overlap = "Yes";
            q->overlap_why = "the kernel copies in the initiator's context; "
                             "the peer is not involved";
        }
        q->permsg = "No";
        q->permsg_why = m->xkind == FY_XFER_PROCMEM
                            ? "one pread/pwrite on a file opened once per peer"
                            : "one system call with the peer's pid and "
                              "addresses; nothing registered";
        q->active = "Yes";
        q->active_why = m->kind == LAB_GET ? "the origin reads the target's "
                                             "window directly"
                                           : "the origin writes the target's "
                                             "window directly";
        q->passive = "Yes";
        q->passive_why = "the target takes no part in the copy (needs "
                         "ptrace-read permission on it)";
        break;
    case LAB_ATTACH:
        if (o->measured)
            snprintf(buf, len,
                     "the source is frozen while attached: it lost %.0f us "
                     "of computation during a %.0f us transfer",
                     o->lost_us, o->xfer_us);
        else
            snprintf(buf, len, "the source is stopped while attached");
        q->overlap = "No";
        q->overlap_why = buf;
        q->permsg = "Yes";
        q->permsg_why = "a stop (PTRACE_SEIZE+INTERRUPT+wait) and a "
                        "PTRACE_DETACH around every transfer";
        q->active = "Yes";
        q->active_why = "reads and (since Linux 2.6.39) writes through "
                        "/proc/<pid>/mem";
        q->passive = "Yes, freezing the target";
        q->passive_why = "no help needed, but the target stops for every "
                         "transfer";
        break;
    case LAB_SHMBUF:
    case LAB_QUEUE:
    case LAB_NET:
        q->overlap = "No";
        q->overlap_why = m->kind == LAB_NET
                             ? "both processes spend the transfer in "
                               "send/recv copies through the kernel"
                             : "the sender copies in and the receiver copies "
                               "out for the whole transfer";
        q->permsg = "No";
        q->permsg_why = m->kind == LAB_NET
                            ? "a connection made once; per message only "
                              "send/recv calls"
                        : m->kind == LAB_QUEUE
                            ? "queue operations per cell, no set-up per "
                              "message"
                            : "two flags per chunk, no set-up per message";
        q->active = "Yes";
        q->active_why = "both sides are inside the epoch's synchronisation "
                        "calls and can copy";
        q->passive = "With a thread";
        q->passive_why = "the target must run the receiving half";
        break;
    case LAB_SPLIT:
        q->overlap = "Partly";
        q->overlap_why = "the source copies chunks when it is at hand, and "
                         "the destination does the rest alone";
        q->permsg = "No";
        q->permsg_why = "one request to the source and a shared chunk "
                        "counter per message";
        q->active = "Yes";
        q->active_why = "as cma get, with the target's help inside its "
                        "synchronisation calls";
        q->passive = "Yes";
        q->passive_why = "without the target's help it is a plain cma get";
        break;
    }
}

/* ---- JSON
 * ----------------------------------------------------------------------------
 */

static void jstr(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void jnum(FILE *f, double v)
{
    if (v != v || v > 1e29 || v < -1e29)
        fputs("null", f);
    else
        fprintf(f, "%.6g", v);
}

static void jfig(FILE *f, const struct lab_fig *g)
{
    if (!g->nrep || !g->valid) {
        fputs("null", f);
        return;
    }
    fputs("{\"us\": ", f);
    jnum(f, g->value);
    fputs(", \"min_us\": ", f);
    jnum(f, g->min);
    fputs(", \"repeats_us\": [", f);
    for (int r = 0; r < g->nrep; r++) {
        fputs(r ? ", " : "", f);
        jnum(f, g->rep[r]);
    }
    fputs("]}", f);
}

static const char *json_doc =
    "{\"machine\": \"host, CPU, caches (bytes, from sysfs), kernel, "
    "hypervisor, clocksource, load averages at start and end, CPU "
    "idle percent in the second before the run and host steal percent "
    "then and during the run (/proc/stat; -1: unknown), elapsed seconds\","
    " \"settings\": \"quick mode, repeats, pool region bytes (8 x L2 + 16 "
    "MiB), the library's double-buffer half, cell size, cells per process, "
    "eager limit\","
    " \"clock\": \"cache-line ping-pong between the two processes: round "
    "trip and one-way (us); skew_us = P1's stamp minus the midpoint of P0's "
    "(cross-process timing uses CLOCK_MONOTONIC)\","
    " \"mechanisms\": \"label, registry name, kind, whether it ran, and why "
    "not\","
    " \"latency_1B\": \"per label: us = median over repeats of each repeat's "
    "middle-80% mean; min_us = fastest single transfer; repeats_us\","
    " \"bandwidth\": \"sizes (bytes) and per label one entry per size (same "
    "fields as latency_1B, null if not run); MiB/s = bytes / 2^20 / (us / "
    "1e6)\","
    " \"setup\": \"per mechanism: what is timed, setup_us, teardown_us, "
    "setup_touch_us (segment set-up including faulting every page in; null "
    "if n/a), region_specific, measured (false: nothing to set up)\","
    " \"cache\": \"calibration per side (src = P0, dst = P1): warm_ns and "
    "cold_ns re-read times of the user buffer (half the L2, random "
    "pointer chase), per_line_ns = (cold - warm) / lines, dram_ns after "
    "clflush; per label and transfer size: re-read ns after the transfer, "
    "estimated lines evicted = (ns - ref) / per_line_ns where ref is the "
    "cell's own no-transfer re-read (src_ref_ns, dst_ref_ns), "
    "disturbance_lines = how far that reference strays from the warm "
    "calibration (a cell above 10% of the buffer is measured again, up "
    "to 3 times, the least disturbed kept), and dram_share = (ns - "
    "cold_ns) / (dram_ns - cold_ns) in [0, 1] when the re-read was "
    "slower than L3-cold; none = no transfer in either pass; "
    "measurements, noisy_cells (kept cells still above 10%), "
    "worst_disturbance_lines\","
    " \"overlap\": \"one-sided labels: bytes, xfer_us, the passive side's "
    "compute alone_us and with_us (during the transfer), lost_us\","
    " \"memcpy\": \"sizes and ns per copy for each copy routine (null: not "
    "available)\","
    " \"sweeps\": \"bytes moved; shmbuf half sizes and queue cell sizes "
    "with us per transfer; two_sided_copy: us per transfer of shmbuf and "
    "queue with each copy routine at two sizes\","
    " \"tune\": \"grid sizes, eager us (one cell) and rendezvous us per "
    "label (handshake included; cma split is the shared single copy), "
    "derived eager_max, split_min (0: off, null: not measured) and rules "
    "(min_bytes, mechanism)\"}";

int lab_write_json(struct lab *L, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -errno;
    struct lab_results *r = &lab_res;
    if (L->opt.protocols) {
        /* --protocols: the machine and that experiment only. */
        fprintf(f, "{\n\"format\": 1,\n\"machine\": {\"host\": ");
        jstr(f, r->host);
        fputs(", \"cpu\": ", f);
        jstr(f, r->cpu);
        fprintf(f, ", \"ncpus\": %d, \"kernel\": ", r->ncpus);
        jstr(f, r->kernel);
        fputs(", \"date\": ", f);
        jstr(f, r->date);
        fprintf(f,
                ", \"load_start\": [%.2f, %.2f, %.2f], \"load_end\": "
                "[%.2f, %.2f, %.2f], \"elapsed_s\": %.1f},\n",
                r->load_start[0], r->load_start[1], r->load_start[2],
                r->load_end[0], r->load_end[1], r->load_end[2], r->elapsed_s);
        lab_proto_write_json(f);
        fputs("\n}\n", f);
        int rc = ferror(f) ? -EIO : 0;
        if (fclose(f) != 0)
            rc = -errno;
        return rc;
    }
    fprintf(f, "{\n\"_doc\": %s,\n", json_doc);
    fprintf(f, "\"format\": 1,\n\"machine\": {\"host\": ");
    jstr(f, r->host);
    fputs(", \"cpu\": ", f);
    jstr(f, r->cpu);
    fprintf(f,
            ", \"ncpus\": %d, \"l1d\": %zu, \"l2\": %zu, \"l3\": %zu, "
            "\"line\": %zu, \"kernel\": ",
            r->ncpus, L->l1, L->l2, L->l3, L->line);
    jstr(f, r->kernel);
    fputs(", \"virtualization\": ", f);
    jstr(f, r->virt);
    fputs(", \"clocksource\": ", f);
    jstr(f, r->clocksource);
    fputs(", \"date\": ", f);
    jstr(f, r->date);
    fprintf(f,
            ", \"load_start\": [%.2f, %.2f, %.2f], \"load_end\": [%.2f, "
            "%.2f, %.2f], \"idle_before_pct\": %.1f, \"steal_before_pct\": "
            "%.2f, \"steal_during_pct\": %.2f, \"elapsed_s\": %.1f, "
            "\"standalone\": %s},\n",
            r->load_start[0], r->load_start[1], r->load_start[2],
            r->load_end[0], r->load_end[1], r->load_end[2], r->idle_before,
            r->steal_before, r->steal_during, r->elapsed_s,
            L->standalone ? "true" : "false");
    fprintf(f,
            "\"settings\": {\"quick\": %s, \"repeats\": %d, "
            "\"region_bytes\": %zu, \"shmbuf_half\": %zu, \"cell_size\": "
            "%zu, \"ncells\": %u, \"eager_max\": %zu},\n",
            L->opt.quick ? "true" : "false", L->opt.repeats, L->region_size,
            L->lib_shmbuf, L->lib_cell, LAB_NCELLS, L->lib_eager);
    fputs("\"clock\": {\"line_rtt_us\": ", f);
    jnum(f, r->line_rtt_us);
    fputs(", \"line_oneway_us\": ", f);
    jnum(f, r->line_oneway_us);
    fputs(", \"skew_us\": ", f);
    jnum(f, r->skew_us);
    fputs("},\n\"mechanisms\": [", f);
    for (int i = 0; i < L->nmech; i++) {
        const struct lab_mech *m = &L->mech[i];
        fputs(i ? ",\n  " : "\n  ", f);
        fputs("{\"label\": ", f);
        jstr(f, m->label);
        fputs(", \"registry\": ", f);
        jstr(f, m->ops->name);
        fputs(", \"kind\": ", f);
        jstr(f, kind_name(m->kind));
        fprintf(f, ", \"one_sided\": %s, \"ok\": %s, \"why\": ",
                lab_mech_one_sided(m) ? "true" : "false",
                m->ok ? "true" : "false");
        jstr(f, m->why);
        fputs(", \"summary\": ", f);
        jstr(f, m->ops->summary);
        fputs("}", f);
    }
    fputs("],\n\"latency_1B\": {", f);
    bool first = true;
    for (int i = 0; i < L->nmech; i++) {
        if (!L->mech[i].ok)
            continue;
        fputs(first ? "\n  " : ",\n  ", f);
        first = false;
        jstr(f, L->mech[i].label);
        fputs(": ", f);
        jfig(f, &r->lat[i]);
    }
    fputs("},\n\"bandwidth\": {\"sizes\": [", f);
    for (int s = 0; s < r->nsizes; s++)
        fprintf(f, "%s%zu", s ? ", " : "", r->sizes[s]);
    fputs("], \"us\": {", f);
    first = true;
    for (int i = 0; i < L->nmech; i++) {
        if (!L->mech[i].ok)
            continue;
        fputs(first ? "\n  " : ",\n  ", f);
        first = false;
        jstr(f, L->mech[i].label);
        fputs(": [", f);
        for (int s = 0; s < r->nsizes; s++) {
            fputs(s ? ",\n    " : "\n    ", f);
            jfig(f, &r->bw[i][s]);
        }
        fputs("]", f);
    }
    fputs("}},\n\"setup\": [", f);
    for (int i = 0; i < r->nsetup; i++) {
        const struct lab_setup_row *s = &r->setup[i];
        fputs(i ? ",\n  " : "\n  ", f);
        fputs("{\"mechanism\": ", f);
        jstr(f, s->mech);
        fputs(", \"what\": ", f);
        jstr(f, s->what);
        fprintf(f,
                ", \"measured\": %s, \"nothing_to_set_up\": %s, "
                "\"setup_us\": ",
                s->measured ? "true" : "false", s->nothing ? "true" : "false");
        if (s->measured || s->nothing)
            jnum(f, s->measured ? s->setup_us : 0);
        else
            fputs("null", f);
        fputs(", \"teardown_us\": ", f);
        if (s->measured || s->nothing)
            jnum(f, s->measured ? s->teardown_us : 0);
        else
            fputs("null", f);
        fputs(", \"setup_touch_us\": ", f);
        if (s->measured && s->setup_touch_us >= 0)
            jnum(f, s->setup_touch_us);
        else
            fputs("null", f);
        fprintf(f, ", \"region_specific\": %s, \"note\": ",
                s->region_specific ? "true" : "false");
        jstr(f, s->note);
        fputs("}", f);
    }
    fputs("],\n\"cache\": {\"calibration\": {", f);
    for (int side = 0; side < 2; side++) {
        const struct lab_cache_cal *c = &r->cal[side];
        fprintf(f, "%s\"%s\": {\"lines\": %d, \"warm_ns\": ", side ? ", " : "",
                side ? "dst" : "src", c->lines);
        jnum(f, c->warm_ns);
        fputs(", \"cold_ns\": ", f);
        jnum(f, c->cold_ns);
        fputs(", \"per_line_ns\": ", f);
        jnum(f, c->per_line_ns);
        fputs(", \"dram_ns\": ", f);
        jnum(f, c->dram_ns);
        fputs("}", f);
    }
    fprintf(f,
            "}, \"measurements\": %d, \"noisy_cells\": %d, "
            "\"worst_disturbance_lines\": ",
            r->cache_attempts, r->cache_noisy_cells);
    jnum(f, r->cache_noise);
    fputs(", \"sizes\": [", f);
    for (int s = 0; s < r->ncache; s++)
        fprintf(f, "%s%zu", s ? ", " : "", r->cache_sizes[s]);
    fputs("], \"none\": ", f);
    if (r->cache_none.valid) {
        fputs("{\"src_ns\": ", f);
        jnum(f, r->cache_none.ns[0]);
        fputs(", \"dst_ns\": ", f);
        jnum(f, r->cache_none.ns[1]);
        fputs(", \"src_lines\": ", f);
        jnum(f, r->cache_none.lines[0]);
        fputs(", \"dst_lines\": ", f);
        jnum(f, r->cache_none.lines[1]);
        fputs("}", f);
    } else {
        fputs("null", f);
    }
    fputs(", \"results\": {", f);
    first = true;
    for (int i = 0; i < L->nmech; i++) {
        if (!L->mech[i].ok)
            continue;
        fputs(first ? "\n  " : ",\n  ", f);
        first = false;
        jstr(f, L->mech[i].label);
        fputs(": [", f);
        for (int s = 0; s < r->ncache; s++) {
            const struct lab_cache_res *c = &r->cache[i][s];
            fputs(s ? ", " : "", f);
            if (!c->valid) {
                fputs("null", f);
                continue;
            }
            fputs("{\"src_ns\": ", f);
            jnum(f, c->ns[0]);
            fputs(", \"dst_ns\": ", f);
            jnum(f, c->ns[1]);
            fputs(", \"src_lines\": ", f);
            jnum(f, c->lines[0]);
            fputs(", \"dst_lines\": ", f);
            jnum(f, c->lines[1]);
            fputs(", \"src_ref_ns\": ", f);
            jnum(f, c->ref_ns[0]);
            fputs(", \"dst_ref_ns\": ", f);
            jnum(f, c->ref_ns[1]);
            fputs(", \"disturbance_lines\": ", f);
            jnum(f, c->noise);
            fputs(", \"src_dram_share\": ", f);
            jnum(f, c->dram_share[0]);
            fputs(", \"dst_dram_share\": ", f);
            jnum(f, c->dram_share[1]);
            fputs("}", f);
        }
        fputs("]", f);
    }
    fputs("}},\n\"overlap\": {", f);
    first = true;
    for (int i = 0; i < L->nmech; i++) {
        const struct lab_overlap *o = &r->ovl[i];
        if (!o->measured)
            continue;
        fputs(first ? "\n  " : ",\n  ", f);
        first = false;
        jstr(f, L->mech[i].label);
        fprintf(f, ": {\"bytes\": %zu, \"xfer_us\": ", o->bytes);
        jnum(f, o->xfer_us);
        fputs(", \"alone_us\": ", f);
        jnum(f, o->alone_us);
        fputs(", \"with_us\": ", f);
        jnum(f, o->with_us);
        fputs(", \"lost_us\": ", f);
        jnum(f, o->lost_us);
        fputs("}", f);
    }
    fputs("},\n\"memcpy\": {\"sizes\": [", f);
    for (int s = 0; s < r->nmc; s++)
        fprintf(f, "%s%zu", s ? ", " : "", r->mc_sizes[s]);
    fputs("], \"ns\": {", f);
    for (int v = 0; v < 3; v++) {
        fputs(v ? ",\n  " : "\n  ", f);
        jstr(f, lab_copies[v].name);
        fputs(": ", f);
        if (!lab_copies[v].ok) {
            fputs("null", f);
            continue;
        }
        fputs("[", f);
        for (int s = 0; s < r->nmc; s++) {
            fputs(s ? ", " : "", f);
            jnum(f, r->mc_ns[v][s]);
        }
        fputs("]", f);
    }
    fprintf(f,
            "}},\n\"sweeps\": {\"bytes\": %zu, \"shmbuf\": {\"half_sizes\": [",
            r->sweep_bytes);
    for (int s = 0; s < r->nsb; s++)
        fprintf(f, "%s%zu", s ? ", " : "", r->sb_sizes[s]);
    fputs("], \"us\": [", f);
    for (int s = 0; s < r->nsb; s++) {
        fputs(s ? ", " : "", f);
        jnum(f, r->sb_us[s] < 0 ? 1e300 : r->sb_us[s]);
    }
    fputs("]}, \"queue\": {\"cell_sizes\": [", f);
    for (int s = 0; s < r->nq; s++)
        fprintf(f, "%s%zu", s ? ", " : "", r->q_sizes[s]);
    fputs("], \"us\": [", f);
    for (int s = 0; s < r->nq; s++) {
        fputs(s ? ", " : "", f);
        jnum(f, r->q_us[s] < 0 ? 1e300 : r->q_us[s]);
    }
    fprintf(f, "]}, \"two_sided_copy\": {\"sizes\": [%zu, %zu]",
            r->tsc_sizes[0], r->tsc_sizes[1]);
    for (int w = 0; w < 2; w++) {
        fprintf(f, ", \"%s\": {", w ? "queue" : "shmbuf");
        for (int v = 0; v < 3; v++) {
            fputs(v ? ", " : "", f);
            jstr(f, lab_copies[v].name);
            fputs(": [", f);
            jnum(f, r->tsc_us[w][v][0] < 0 ? 1e300 : r->tsc_us[w][v][0]);
            fputs(", ", f);
            jnum(f, r->tsc_us[w][v][1] < 0 ? 1e300 : r->tsc_us[w][v][1]);
            fputs("]", f);
        }
        fputs("}", f);
    }
    fputs("}},\n", f);
    lab_proto_write_json(f);
    fputs(",\n\"tune\": ", f);
    const struct lab_tune *t = &r->tune;
    if (!t->done) {
        fputs("null\n}\n", f);
    } else {
        fputs("{\"eager\": {\"sizes\": [", f);
        for (int e = 0; e < t->ne; e++)
            fprintf(f, "%s%zu", e ? ", " : "", t->e_sizes[e]);
        fputs("], \"us\": [", f);
        for (int e = 0; e < t->ne; e++) {
            fputs(e ? ", " : "", f);
            jnum(f, t->eager_us[e] < 0 ? 1e300 : t->eager_us[e]);
        }
        fputs("]}, \"rendezvous\": {\"sizes\": [", f);
        for (int g = 0; g < t->nr; g++)
            fprintf(f, "%s%zu", g ? ", " : "", t->r_sizes[g]);
        fputs("], \"us\": {", f);
        first = true;
        for (int i = 0; i < L->nmech; i++) {
            if (!t->r_used[i])
                continue;
            fputs(first ? "" : ", ", f);
            first = false;
            jstr(f, L->mech[i].label);
            fputs(": [", f);
            for (int g = 0; g < t->nr; g++) {
                fputs(g ? ", " : "", f);
                jnum(f, t->rndv_us[i][g]);
            }
            fputs("]", f);
        }
        fprintf(f, "}}, \"eager_max\": %llu, \"eager_limited_by_cell\": %s, ",
                (unsigned long long)t->eager_max,
                t->eager_limited ? "true" : "false");
        if (t->split_measured)
            fprintf(f, "\"split_min\": %llu, ",
                    (unsigned long long)t->split_min);
        else
            fputs("\"split_min\": null, ", f);
        fputs("\"rules\": [", f);
        for (int k = 0; k < t->nrules; k++) {
            fprintf(f, "%s{\"min_bytes\": %llu, \"mechanism\": ", k ? ", " : "",
                    (unsigned long long)t->rules[k].min);
            jstr(f, L->mech[t->rules[k].mech].ops->name);
            fputs("}", f);
        }
        fputs("]}\n}\n", f);
    }
    int rc = ferror(f) ? -EIO : 0;
    if (fclose(f) != 0)
        rc = -errno;
    return rc;
}

/* ---- report.md
 * ----------------------------------------------------------------------- */

static void fmt_us(char *b, size_t n, double v)
{
    if (v < 0)
        snprintf(b, n, "n/a");
    else if (v < 10)
        snprintf(b, n, "%.2f", v);
    else if (v < 1000)
        snprintf(b, n, "%.1f", v);
    else
        snprintf(b, n, "%.0f", v);
}

static void fmt_mb(char *b, size_t n, double v)
{
    if (v <= 0)
        snprintf(b, n, "n/a");
    else if (v < 10)
        snprintf(b, n, "%.2f", v);
    else
        snprintf(b, n, "%.0f", v);
}

static void print_tune_table(struct lab *L, FILE *f)
{
    const struct lab_tune *t = &lab_res.tune;
    char b[32], v[32];
    fputs("| size | eager (one cell) |", f);
    for (int i = 0; i < L->nmech; i++)
        if (t->r_used[i])
            fprintf(f, " %s rendezvous |", L->mech[i].label);
    fputs(" fastest |\n|---:|---:|", f);
    for (int i = 0; i < L->nmech; i++)
        if (t->r_used[i])
            fputs("---:|", f);
    fputs("---|\n", f);
    for (int g = 0; g < t->nr; g++) {
        size_t len = t->r_sizes[g];
        double eager = -1;
        for (int e = 0; e < t->ne; e++)
            if (t->e_sizes[e] == len)
                eager = t->eager_us[e];
        fmt_us(v, sizeof(v), eager);
        fprintf(f, "| %s | %s |", lab_size_str(len, b, sizeof(b)), v);
        double best = eager >= 0 ? eager : 1e300;
        const char *who = eager >= 0 ? "eager" : "?";
        for (int i = 0; i < L->nmech; i++) {
            if (!t->r_used[i])
                continue;
            fmt_us(v, sizeof(v),
                   t->rndv_us[i][g] > 1e29 ? -1 : t->rndv_us[i][g]);
            fprintf(f, " %s |", v);
            if (t->rndv_us[i][g] < best) {
                best = t->rndv_us[i][g];
                who = L->mech[i].label;
            }
        }
        fprintf(f, " %s |\n", who);
    }
}

void lab_print_tune(struct lab *L, FILE *f, bool settings)
{
    const struct lab_tune *t = &lab_res.tune;
    if (!t->done)
        return;
    fputs("Times in us from the sender's first instruction to the last byte "
          "in the receiver's buffer, rendezvous handshake included.\n\n",
          f);
    print_tune_table(L, f);
    if (!settings)
        return;
    fprintf(f, "\neager_max = %llu%s\n", (unsigned long long)t->eager_max,
            t->eager_limited ? " (eager still won at one cell's payload: "
                               "limited by the cell size)"
                             : "");
    if (t->split_measured)
        fprintf(f, "split_min = %llu%s\n", (unsigned long long)t->split_min,
                t->split_min ? " (cma from here is the shared single copy)"
                             : " (the shared single copy never paid off)");
    for (int k = 0; k < t->nrules; k++)
        fprintf(f, "xfer.%llu = %s\n", (unsigned long long)t->rules[k].min,
                L->mech[t->rules[k].mech].ops->name);
}

int lab_write_report(struct lab *L, FILE *f, const char *plots_note,
                     const char *dir)
{
    struct lab_results *r = &lab_res;
    char a[32], b[32], c[32], d[32], e[32];
    (void)dir;
    if (L->opt.protocols) {
        fprintf(f, "# Ferry protocol laboratory: %s\n\n", r->host);
        fprintf(f,
                "Generated by `ferry-bench --protocols%s` on %s, in %.0f "
                "s.\n\n- CPU: %s, %d online CPUs; %s\n- kernel: %s\n- load "
                "average (1, 5, 15 min) at start %.2f %.2f %.2f, at end "
                "%.2f %.2f %.2f\n- eager limit %zu B (FERRY_EAGER_MAX in "
                "force)\n\n",
                L->opt.quick ? " --quick" : "", r->date, r->elapsed_s, r->cpu,
                r->ncpus, r->virt, r->kernel, r->load_start[0],
                r->load_start[1], r->load_start[2], r->load_end[0],
                r->load_end[1], r->load_end[2], L->lib_eager);
        lab_proto_write_md(f);
        fputs("## Plots\n\n", f);
        fputs(plots_note, f);
        fputs("\n", f);
        return ferror(f) ? -EIO : 0;
    }
    fprintf(f, "# Ferry mechanism laboratory: %s\n\n", r->host);
    fprintf(f, "Generated by `ferry-bench%s` on %s, in %.0f s.\n\n",
            L->opt.quick ? " --quick" : "", r->date, r->elapsed_s);
    fputs("## Machine\n\n", f);
    fprintf(f, "- CPU: %s, %d online CPUs; %s\n", r->cpu, r->ncpus, r->virt);
    fprintf(f, "- caches (sysfs, cpu0): L1d %s, L2 %s, L3 %s, line %zu B\n",
            lab_size_str(L->l1, a, sizeof(a)),
            lab_size_str(L->l2, b, sizeof(b)),
            L->l3 ? lab_size_str(L->l3, c, sizeof(c)) : "none", L->line);
    fprintf(f, "- kernel: %s; clocksource: %s\n", r->kernel, r->clocksource);
    fprintf(f,
            "- load average (1, 5, 15 min) at start %.2f %.2f %.2f, at "
            "end %.2f %.2f %.2f; CPUs %.0f%% idle in the second before the "
            "run, host steal %.1f%% then and %.1f%% during the run%s\n",
            r->load_start[0], r->load_start[1], r->load_start[2],
            r->load_end[0], r->load_end[1], r->load_end[2], r->idle_before,
            r->steal_before, r->steal_during,
            r->idle_before >= 0 && r->idle_before < 90
                ? " (**not idle**: other work shared the cores; treat the "
                  "figures with care)"
            : r->steal_during > 5 ? " (**the host took the CPUs away** often "
                                    "during the run; treat the figures with "
                                    "care)"
                                  : "");
    fprintf(f,
            "- processes: %s; P0 (source) and P1 (destination) pinned to "
            "different CPUs\n",
            L->standalone ? "standalone (P1 forked by P0)" : "mpiexec -n 2");
    fprintf(f,
            "- settings: %s, %d repeats; the library's double-buffer half "
            "%s, cell %s (%u per process), eager limit %zu B\n\n",
            L->opt.quick ? "quick" : "full", L->opt.repeats,
            lab_size_str(L->lib_shmbuf, a, sizeof(a)),
            lab_size_str(L->lib_cell, b, sizeof(b)), LAB_NCELLS, L->lib_eager);

    fputs("## Method\n\n", f);
    fprintf(f,
            "- One transfer = from the first instruction of the transfer to "
            "the last byte in the destination buffer, both processes released "
            "from a shared-memory barrier first (the seed's method). One-sided "
            "kinds are timed by the initiator around its single call; "
            "two-sided ones from P0's start to P1's end on CLOCK_MONOTONIC, "
            "which both processes share (check: a cache-line ping-pong has "
            "a %.2f us round trip, %.2f us one way, and P1's stamps sit "
            "%+.3f us off the midpoint).\n",
            r->line_rtt_us, r->line_oneway_us, r->skew_us);
    fprintf(f,
            "- Buffers move by a cache line past the previous transfer each "
            "time and are reused only after 8 x L2 = %s has been touched "
            "(the seed's rule; note this working set still fits this CPU's "
            "L3 of %s, so \"cold\" data comes from L3, not DRAM).\n",
            lab_size_str(8 * L->l2, a, sizeof(a)),
            L->l3 ? lab_size_str(L->l3, b, sizeof(b)) : "none");
    fputs("- Each figure is the median over repeats of each repeat's mean of "
          "the middle 80% of its samples (seed 001, sec. 5: drop the fastest "
          "and slowest 10%). MiB/s = 2^20 bytes per second (the seed's MB).\n",
          f);
    fputs("- Two-sided kinds use the laboratory's own sender/receiver "
          "drivers on the shared segment (double buffer with full/empty "
          "flags; fixed-size cells through the library's lock-free queues; "
          "TCP through the net mechanism's socket helpers); one-sided kinds "
          "call the registry's `copy_remote`.\n\n",
          f);

    /* ---- Table V ---- */
    fputs("## Summary (the seed's Table V)\n\n", f);
    fputs("| mechanism | kind | latency 1 B (us) | throughput 4 MiB (MiB/s) "
          "| peak (MiB/s at size) | setup (us) | tear-down (us) | cache "
          "impact (src, dst) | can overlap | per-message set-up | one-sided "
          "active | one-sided passive |\n",
          f);
    fputs("|---|---|---:|---:|---:|---:|---:|---|---|---|---|---|\n", f);
    for (int i = 0; i < L->nmech; i++) {
        const struct lab_mech *m = &L->mech[i];
        if (!m->ok)
            continue;
        const struct lab_fig *f4 = fig_4m(L, i);
        double pk;
        size_t pat;
        peak_of(i, &pk, &pat);
        const struct lab_setup_row *s = setup_for(m);
        struct quali q;
        char buf[256];
        qualify(L, i, &q, buf, sizeof(buf));
        char lat[32], thr[32], peak[64], su[32], td[32];
        fmt_us(lat, sizeof(lat),
               r->lat[i].nrep && r->lat[i].valid ? r->lat[i].value : -1);
        fmt_mb(thr, sizeof(thr), f4 ? mibps(4u << 20, f4->value) : 0);
        fmt_mb(a, sizeof(a), pk);
        snprintf(peak, sizeof(peak), "%s at %s", a,
                 lab_size_str(pat, b, sizeof(b)));
        if (s && s->measured) {
            fmt_us(su, sizeof(su), s->setup_us);
            fmt_us(td, sizeof(td), s->teardown_us);
        } else {
            const char *z = s && s->nothing ? "0" : "n/a";
            snprintf(su, sizeof(su), "%s", z);
            snprintf(td, sizeof(td), "%s", z);
        }
        fprintf(f,
                "| %s | %s | %s | %s | %s | %s | %s | (%s, %s) | %s | %s | %s "
                "| %s |\n",
                m->label, kind_name(m->kind), lat, thr, peak, su, td,
                cache_class(i, 0, NULL), cache_class(i, 1, NULL), q.overlap,
                q.permsg, q.active, q.passive);
    }
    fputs("\nSet-up is what must happen before the first transfer (per peer, "
          "or per transfer for ptrace-attach; see Table III below); cache "
          "impact is classed from the estimated L2 lines evicted from a "
          "user buffer of half the L2 by a 1 MiB transfer: under 10% Low, "
          "under 40% Medium, else High (Table IV below).\n\n",
          f);
    fputs("Why each qualitative entry:\n\n", f);
    fputs("| mechanism | can overlap | per-message set-up | one-sided active | "
          "one-sided passive |\n|---|---|---|---|---|\n",
          f);
    for (int i = 0; i < L->nmech; i++) {
        if (!L->mech[i].ok)
            continue;
        struct quali q;
        char buf[256];
        qualify(L, i, &q, buf, sizeof(buf));
        fprintf(f, "| %s | %s: %s | %s: %s | %s: %s | %s: %s |\n",
                L->mech[i].label, q.overlap, q.overlap_why, q.permsg,
                q.permsg_why, q.active, q.active_why, q.passive, q.passive_why);
    }
    fputs("\nThe seed's Table V (2 GHz Xeon, Linux 2.6.10, Myrinet 2000; "
          "quoted):\n\n",
          f);
    fputs("| mechanism (seed) | latency (us) | throughput (MBps) | setup (us) "
          "| tear-down (us) | cache impact (src, dst) | overlap | per msg. "
          "overhead | active | passive "
          "|\n|---|---:|---:|---:|---:|---|---|---|---|---|\n"
          "| Shared buffer | 1.5 | 513.5 | 10.9 | 5.1 | (High, Low) | No | No "
          "| Yes | with thread |\n"
          "| Message queue | 3.3 | 437.1 | 10.9 | 5.1 | (High, High) | No | No "
          "| Yes | with thread |\n"
          "| Kaput put | 2.1 | 495.5 | 2.8 | 1.4 | (High, Low) | Yes | Yes | "
          "Yes | Yes |\n"
          "| Kaput get | 2.1 | 500.3 | 2.8 | 1.4 | (Low, High) | Yes | Yes | "
          "Yes | Yes |\n"
          "| NIC-copy put | 11.6 | 227.1 | 4.5 | 212.4 | (Low, Low) | Yes | "
          "Yes | Yes | Yes |\n"
          "| NIC-copy get | 14.3 | 171.7 | 4.5 | 212.4 | (Low, Low) | Yes | "
          "Yes | Yes | Yes |\n"
          "| Ptrace | 20.2 | 460.0 | 0.0 | 0.0 | (Medium, High) | No | No | "
          "Yes | with thread |\n\n",
          f);

    /* ---- mechanisms not measured ---- */
    bool any_skip = false;
    for (int i = 0; i < L->nmech; i++)
        any_skip |= !L->mech[i].ok;
    if (any_skip) {
        fputs("## Not measured here\n\n", f);
        for (int i = 0; i < L->nmech; i++)
            if (!L->mech[i].ok)
                fprintf(f, "- **%s**: %s\n", L->mech[i].label, L->mech[i].why);
        fputs("\n", f);
    }

    /* ---- Table II ---- */
    fputs("## Table II: one-byte latency\n\n", f);
    fprintf(f,
            "Baseline: one cache line between the two processes, one way: "
            "%.2f us.\n\n",
            r->line_oneway_us);
    fputs("| mechanism | latency (us) | fastest (us) | repeats (us) | seed's "
          "class (us) |\n|---|---:|---:|---|---:|\n",
          f);
    for (int i = 0; i < L->nmech; i++) {
        const struct lab_fig *g = &r->lat[i];
        if (!L->mech[i].ok || !g->nrep)
            continue;
        char reps[160] = "";
        for (int k = 0; k < g->nrep; k++) {
            size_t n = strlen(reps);
            snprintf(reps + n, sizeof(reps) - n, "%s%.2f", k ? " " : "",
                     g->rep[k]);
        }
        const struct seed_row *sr = seed_for(&L->mech[i]);
        char seed[64] = "";
        if (sr)
            snprintf(seed, sizeof(seed), "%s %.1f", sr->name, sr->lat);
        fmt_us(a, sizeof(a), g->valid ? g->value : -1);
        fmt_us(b, sizeof(b), g->valid ? g->min : -1);
        fprintf(f, "| %s | %s | %s | %s | %s |\n", L->mech[i].label, a, b, reps,
                seed);
    }

    /* ---- Fig. 4 ---- */
    fputs("\n## Fig. 4: bandwidth (MiB/s) by message size\n\n| size |", f);
    for (int i = 0; i < L->nmech; i++)
        if (L->mech[i].ok)
            fprintf(f, " %s |", L->mech[i].label);
    fputs("\n|---:|", f);
    for (int i = 0; i < L->nmech; i++)
        if (L->mech[i].ok)
            fputs("---:|", f);
    fputs("\n", f);
    for (int s = 0; s < r->nsizes; s++) {
        fprintf(f, "| %s |", lab_size_str(r->sizes[s], a, sizeof(a)));
        double best = 0;
        for (int i = 0; i < L->nmech; i++)
            if (L->mech[i].ok && r->bw[i][s].valid && r->bw[i][s].nrep)
                best = FY_MAX(best, mibps(r->sizes[s], r->bw[i][s].value));
        for (int i = 0; i < L->nmech; i++) {
            if (!L->mech[i].ok)
                continue;
            const struct lab_fig *g = &r->bw[i][s];
            double v = g->valid && g->nrep ? mibps(r->sizes[s], g->value) : 0;
            fmt_mb(b, sizeof(b), v);
            fprintf(f, v > 0 && v == best ? " **%s** |" : " %s |", b);
        }
        fputs("\n", f);
    }
    fputs("\nBold: fastest at that size. Times per transfer (us) are in "
          "results.json.\n\n",
          f);

    /* ---- Table III ---- */
    fputs("## Table III: set-up and tear-down\n\n", f);
    fputs("| mechanism | what is timed | setup (us) | tear-down (us) | setup "
          "incl. first touch of every page (us) | region specific | note |\n"
          "|---|---|---:|---:|---:|---|---|\n",
          f);
    for (int i = 0; i < r->nsetup; i++) {
        const struct lab_setup_row *s = &r->setup[i];
        if (s->measured) {
            fmt_us(a, sizeof(a), s->setup_us);
            fmt_us(b, sizeof(b), s->teardown_us);
            fmt_us(c, sizeof(c), s->setup_touch_us);
        } else {
            const char *z = s->nothing ? "0" : "n/a";
            snprintf(a, sizeof(a), "%s", z);
            snprintf(b, sizeof(b), "%s", z);
            snprintf(c, sizeof(c), "n/a");
        }
        fprintf(f, "| %s | %s | %s | %s | %s | %s | %s |\n", s->mech, s->what,
                a, b, c, s->region_specific ? "Yes" : "No", s->note);
    }
    fputs("\nMedians of many set-ups. The seed's Table III (quoted): Shared "
          "buffer and Message "
          "queue 10.9 / 5.1 us (System V segment), Kaput 2.8 / 1.4 us "
          "(region specific), NIC-copy 4.5 / 212.4 us (region specific), "
          "Ptrace 0.0 / 0.0 us.\n\n",
          f);

    /* ---- Table IV ---- */
    fputs("## Table IV and Fig. 5: cache disturbance\n\n", f);
    fputs("No hardware cache counters here (`perf stat -e cache-misses` "
          "reports \"not supported\" under this hypervisor; there is no PAPI), "
          "so the disturbance is measured by its effect. Model: each "
          "process keeps a user buffer of half the L2 whose lines form one "
          "random pointer chain (dependent loads, so prefetchers cannot hide "
          "misses). Re-reading it costs t_warm when it is all in L2 and "
          "t_cold after 8 x L2 of other data has been streamed through "
          "(every line evicted to L3). Each evicted line is assumed to add "
          "the same penalty p = (t_cold - t_warm) / lines. Every cell "
          "alternates rounds without and with the transfer between two "
          "barriers: a re-read that takes t after the transfer, against "
          "t_ref without it, means (t - t_ref) / p lines were evicted. "
          "TLB misses and a vCPU "
          "moved by the host would also show up as \"lines\"; since such "
          "disturbances only ever add time, every re-read time (calibration "
          "included) is the lower quartile of its repeats.\n\n",
          f);
    fprintf(f,
            "Calibration (re-read of the %d-line buffer): source warm %.1f "
            "us, L3-cold %.1f us (%.1f ns per evicted line), DRAM-cold "
            "(clflush) %.1f us; destination warm %.1f us, L3-cold %.1f us "
            "(%.1f ns per line), DRAM-cold %.1f us. A re-read slower than "
            "L3-cold means every line was evicted and some even from the "
            "L3: shown as \"all (N%% DRAM)\", N placing the time between "
            "the L3-cold and DRAM-cold calibrations.\n\n",
            r->cal[0].lines, r->cal[0].warm_ns / 1e3, r->cal[0].cold_ns / 1e3,
            r->cal[0].per_line_ns, r->cal[0].dram_ns / 1e3,
            r->cal[1].warm_ns / 1e3, r->cal[1].cold_ns / 1e3,
            r->cal[1].per_line_ns, r->cal[1].dram_ns / 1e3);
    int ncells = 1;
    for (int i = 0; i < L->nmech; i++)
        ncells += L->mech[i].ok ? r->ncache : 0;
    fprintf(f,
            "Disturbance from outside: every cell's own no-transfer "
            "reference is compared with the warm calibration; %d "
            "measurements were made for %d cells (a cell more than 10%% of "
            "the buffer off is measured again, up to 3 times). Worst kept "
            "cell: %.0f lines off; %d cell%s still above 10%%%s.\n\n",
            r->cache_attempts, ncells, r->cache_noise, r->cache_noisy_cells,
            r->cache_noisy_cells == 1 ? "" : "s",
            r->cache_noisy_cells
                ? ", marked ? (something else shares these cores' L2: on a "
                  "VM, possibly another guest on the SMT sibling)"
                : "");
    fputs("Estimated lines evicted (source / destination) by one transfer of "
          "each size:\n\n| mechanism |",
          f);
    for (int s = 0; s < r->ncache; s++)
        fprintf(f, " %s |", lab_size_str(r->cache_sizes[s], a, sizeof(a)));
    fputs(" class at 1 MiB (src, dst) |\n|---|", f);
    for (int s = 0; s < r->ncache; s++)
        fputs("---:|", f);
    fputs("---|\n", f);
    if (r->cache_none.valid)
        fprintf(f, "| (no transfer in either pass) | %.0f / %.0f |\n",
                r->cache_none.lines[0], r->cache_none.lines[1]);
    for (int i = 0; i < L->nmech; i++) {
        if (!L->mech[i].ok)
            continue;
        fprintf(f, "| %s |", L->mech[i].label);
        for (int s = 0; s < r->ncache; s++) {
            const struct lab_cache_res *x = &r->cache[i][s];
            if (!x->valid) {
                fputs(" n/a |", f);
                continue;
            }
            char side[2][48];
            for (int k = 0; k < 2; k++) {
                if (x->lines[k] > r->cal[k].lines || x->dram_share[k] > 0)
                    snprintf(side[k], sizeof(side[k]), "all (%.0f%% DRAM)",
                             100 * x->dram_share[k]);
                else
                    snprintf(side[k], sizeof(side[k]), "%.0f", x->lines[k]);
            }
            fprintf(f, " %s / %s%s |", side[0], side[1],
                    x->noise > 0.10 * r->cal[0].lines ? " ?" : "");
        }
        fprintf(f, " (%s, %s) |\n", cache_class(i, 0, NULL),
                cache_class(i, 1, NULL));
    }
    fputs("\nThe seed (PAPI L2 misses, 256 KB user buffer, quoted): shared "
          "buffer about 2,050 misses at the source and 225 at the "
          "destination; Ptrace just over 1,060 at the target.\n\n",
          f);

    /* ---- overlap ---- */
    fputs("## Overlap: does the passive side keep computing?\n\n", f);
    fputs("The passive process runs a register-only loop lasting about 3x "
          "the transfer while the initiator transfers; lost = its loop time "
          "with the transfer minus without, each the fastest of its repeats "
          "(other programs on the machine only add time).\n\n| mechanism | "
          "bytes | transfer "
          "(us) | compute alone (us) | with transfer (us) | lost (us) |\n"
          "|---|---:|---:|---:|---:|---:|\n",
          f);
    for (int i = 0; i < L->nmech; i++) {
        const struct lab_overlap *o = &r->ovl[i];
        if (!o->measured)
            continue;
        fmt_us(a, sizeof(a), o->xfer_us);
        fmt_us(b, sizeof(b), o->alone_us);
        fmt_us(c, sizeof(c), o->with_us);
        snprintf(d, sizeof(d), "%.1f", o->lost_us);
        fprintf(f, "| %s | %s | %s | %s | %s | %s |\n", L->mech[i].label,
                lab_size_str(o->bytes, e, sizeof(e)), a, b, c, d);
    }
    fputs("\nTwo-sided mechanisms are not in this table: both processes copy "
          "for the whole transfer by construction.\n\n",
          f);

    /* ---- Fig. 2 ---- */
    fputs("## Fig. 2: copy routines (MiB/s, one process)\n\n| size |", f);
    for (int v = 0; v < 3; v++)
        fprintf(f, " %s |", lab_copies[v].name);
    fputs("\n|---:|---:|---:|---:|\n", f);
    for (int s = 0; s < r->nmc; s++) {
        fprintf(f, "| %s |", lab_size_str(r->mc_sizes[s], a, sizeof(a)));
        for (int v = 0; v < 3; v++) {
            if (!lab_copies[v].ok) {
                fprintf(f, " n/a |");
                continue;
            }
            fmt_mb(b, sizeof(b), mibps(r->mc_sizes[s], r->mc_ns[v][s] / 1e3));
            fprintf(f, " %s |", b);
        }
        fputs("\n", f);
    }
    for (int v = 0; v < 3; v++)
        if (lab_copies[v].why)
            fprintf(f, "\n%s: %s.\n", lab_copies[v].name, lab_copies[v].why);
    fputs("\nThe seed (quoted): its string-instruction copy was fastest up to "
          "about 2 KB and the MMX non-temporal copy much faster beyond.\n\n",
          f);

    /* ---- Fig. 3 ---- */
    fprintf(f,
            "## Fig. 3: double-buffer half and cell size, %s transfers "
            "(MiB/s)\n\n",
            lab_size_str(r->sweep_bytes, a, sizeof(a)));
    fputs("| double-buffer half | shmbuf | | cell (header incl.) | queue |\n"
          "|---:|---:|---|---:|---:|\n",
          f);
    for (int s = 0; s < FY_MAX(r->nsb, r->nq); s++) {
        if (s < r->nsb) {
            fmt_mb(b, sizeof(b),
                   r->sb_us[s] > 0 ? mibps(r->sweep_bytes, r->sb_us[s]) : 0);
            fprintf(f, "| %s | %s | |",
                    lab_size_str(r->sb_sizes[s], a, sizeof(a)), b);
        } else {
            fputs("| | | |", f);
        }
        if (s < r->nq) {
            fmt_mb(b, sizeof(b),
                   r->q_us[s] > 0 ? mibps(r->sweep_bytes, r->q_us[s]) : 0);
            fprintf(f, " %s | %s |\n",
                    lab_size_str(r->q_sizes[s], a, sizeof(a)), b);
        } else {
            fputs(" | |\n", f);
        }
    }
    fputs("\nThe seed (quoted): 8 KB buffers were best for the shared buffer; "
          "queue throughput kept rising with the element size up to 1 MB, "
          "with the knee near 32 KB.\n\n",
          f);
    fputs("Two-sided drivers with each copy routine (MiB/s):\n\n| mechanism | "
          "size |",
          f);
    for (int v = 0; v < 3; v++)
        fprintf(f, " %s |", lab_copies[v].name);
    fputs("\n|---|---:|---:|---:|---:|\n", f);
    for (int w = 0; w < 2; w++)
        for (int s = 0; s < 2; s++) {
            fprintf(f, "| %s | %s |", w ? "queue" : "shmbuf",
                    lab_size_str(r->tsc_sizes[s], a, sizeof(a)));
            for (int v = 0; v < 3; v++) {
                double us = r->tsc_us[w][v][s];
                fmt_mb(b, sizeof(b), us > 0 ? mibps(r->tsc_sizes[s], us) : 0);
                fprintf(f, " %s |", b);
            }
            fputs("\n", f);
        }

    /* ---- crossovers ---- */
    if (r->tune.done) {
        fputs("\n## Crossovers: eager cells against each rendezvous "
              "mechanism\n\n",
              f);
        lab_print_tune(L, f, true);
        fputs("\n`ferry-bench --tune` writes these as a tuning file.\n", f);
    }

    fputs("\n", f);
    lab_proto_write_md(f);
    if (lab_pin_section) /* seed 004's pin-down cache (pin.c) */
        fputs(lab_pin_section, f);
    if (lab_distance_section) /* copy rate by distance (distance.c) */
        fputs(lab_distance_section, f);
    if (lab_wake_section) /* handing the core over (wake.c) */
        fputs(lab_wake_section, f);
    fputs("## Plots\n\n", f);
    fputs(plots_note, f);
    fputs("\n", f);
    return ferror(f) ? -EIO : 0;
}

int lab_write_tuning(struct lab *L, const char *path)
{
    const struct lab_tune *t = &lab_res.tune;
    struct fy_tuning out;
    memset(&out, 0, sizeof(out));
    out.has_eager_max = true;
    out.eager_max = t->eager_max;
    out.has_split_min = t->split_measured;
    out.split_min = t->split_min;
    lab_proto_tuning(&out);
    /* The collectives' keys come from --coll --tune: keep those of the
     * file being replaced. */
    struct fy_tuning old;
    if (fy_tuning_load_msg(path, &old, NULL, 0) == 0) {
        out.has_coll_cma_min = old.has_coll_cma_min;
        out.coll_cma_min = old.coll_cma_min;
        out.has_coll_slice_min = old.has_coll_slice_min;
        out.coll_slice_min = old.coll_slice_min;
        out.has_coll_direct_min = old.has_coll_direct_min;
        out.coll_direct_min = old.coll_direct_min;
    }
    for (int k = 0; k < t->nrules && k < FY_TUNING_MAX_RULES; k++) {
        out.rules[k].min_bytes = t->rules[k].min;
        snprintf(out.rules[k].mech, sizeof(out.rules[k].mech), "%s",
                 L->mech[t->rules[k].mech].ops->name);
        out.nrules++;
    }
    /* The header: where it came from and the measurements behind it. */
    char *hdr = NULL;
    size_t hlen = 0;
    FILE *h = open_memstream(&hdr, &hlen);
    if (!h)
        return -ENOMEM;
    fprintf(h, "Ferry tuning file, written by ferry-bench --tune%s\n",
            L->opt.quick ? " --quick" : "");
    fprintf(h, "host %s, %s, %s; load %.2f at start\n", lab_res.host,
            lab_res.cpu, lab_res.date, lab_res.load_start[0]);
    fprintf(h,
            "cell %zu B, double-buffer half %zu B (the FERRY_* settings "
            "in force when measured)\n\n",
            L->lib_cell, L->lib_shmbuf);
    lab_print_tune(L, h, false);
    if (lab_proto.done) {
        fprintf(h, "\nProtocols (seed 001's early/late receivers, "
                   "bench_earlylate per setting; see bench/README.md):\n");
        lab_proto_print_choice(h);
    }
    fputs("\nThe settings (read by the library at start-up; see "
          "src/util/tuning.h):",
          h);
    fclose(h);
    int rc = fy_tuning_save(path, &out, hdr);
    free(hdr);
    return rc;
}
