/* SPDX-License-Identifier: MIT */
/* ferry-bench --distance: how fast a copy runs against the distance
 * between its destination and its source modulo 4096, in one process, on
 * the library's own code: memcpy (what the C library does), fy_copy
 * (util/copy.c: memcpy, or its vector loop at a slow distance where
 * MPI_Init would have found one), the cma mechanism's copy
 * (fy_xfer_cma_ops.copy_remote on this process) and the procmem one
 * (/proc/self/mem), each with the bounce off and on. On CPUs whose rep movsb
 * stalls when the destination is a few bytes ahead of the source in the page,
 * distances 1-31 are 4-20x slower for memcpy and process_vm_readv; the table
 * shows whether this machine is one of them and what the library's two fixes
 * give. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "lab.h"
#include "util/copy.h"
#include "xfer/xfer.h"

static const int dist_d[] = {0, 8, 16, 31, 32, 64, -16, 2048};
static const size_t dist_sizes[] = {4u << 10, 64u << 10, 256u << 10, 1u << 20};
#define DIST_ND FY_ARRAY_LEN(dist_d)
#define DIST_NS FY_ARRAY_LEN(dist_sizes)

enum { DC_MEMCPY, DC_FYCOPY, DC_CMA, DC_CMA_BOUNCE, DC_PM, DC_PM_BOUNCE, DC_N };
static const char *const dist_names[DC_N] = {
    "memcpy",           "fy_copy",
    "cma (direct)",     "cma (bounced at slow distances)",
    "procmem (direct)", "procmem (bounced at slow distances)"};

static uint64_t dist_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* GB/s of the best of 'repeats' rounds of copies of n bytes. */
static double dist_time(int how, char *dst, char *src, size_t n, int repeats,
                        bool quick)
{
    size_t volume = quick ? (16u << 20) : (64u << 20);
    int iters = (int)FY_MAX(volume / n, (size_t)4);
    pid_t self = getpid();
    double best = 0;
    for (int r = -1; r < repeats; r++) {
        uint64_t t0 = dist_cpu_ns();
        for (int i = 0; i < iters; i++) {
            switch (how) {
            case DC_MEMCPY:
                memcpy(dst, src, n);
                break;
            case DC_FYCOPY:
                fy_copy(dst, src, n);
                break;
            default: {
                const struct fy_xfer_ops *ops =
                    how >= DC_PM ? &fy_xfer_procmem_ops : &fy_xfer_cma_ops;
                if (ops->copy_remote(self, dst, (uint64_t)(uintptr_t)src, n,
                                     true) != (ssize_t)n)
                    return -1;
                break;
            }
            }
            __asm__ volatile("" : : "r"(dst) : "memory");
        }
        uint64_t t1 = dist_cpu_ns();
        double g = (double)n * iters / (double)(t1 > t0 ? t1 - t0 : 1);
        if (r >= 0 && g > best)
            best = g;
    }
    return best;
}

int lab_distance_run(const struct lab_opts *o, FILE *out)
{
    size_t max = dist_sizes[DIST_NS - 1];
    size_t len = 2 * max + 4 * 4096;
    char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED) {
        fprintf(stderr, "ferry-bench: out of memory for --distance\n");
        return 1;
    }
    memset(buf, 0x5a, len);
    /* What MPI_Init would decide here (FERRY_COPY_ALIAS honoured). */
    if (fy_env_load() || fy_copy_init()) {
        munmap(buf, len);
        return 1;
    }
    bool alias = fy_copy_alias, cma_alias = fy_copy_cma_alias;
    char why[256], pmwhy[256];
    bool cma = fy_xfer_cma_ops.probe(why, sizeof(why));
    bool pm = fy_xfer_procmem_ops.probe(pmwhy, sizeof(pmwhy));
    fprintf(out,
            "Copy rate against distance (destination minus source, modulo "
            "4096), one process,\nGB/s = bytes / wall time, best of %d "
            "repeats. At start-up (fy_copy_init, 16 KiB):\nmemcpy %.2f us at "
            "distance 0, %.2f at 16 -> vector loop %s; cma %.2f / %.2f -> "
            "bounce %s.\nfy_copy and the bounced cma use the loop wherever "
            "the distance is 1-31 (forced on for these rows).\n\n",
            o->repeats, fy_copy_measured.memcpy_us[0],
            fy_copy_measured.memcpy_us[1], alias ? "on" : "off",
            fy_copy_measured.cma_us[0], fy_copy_measured.cma_us[1],
            cma_alias ? "on" : "off");
    fprintf(out, "| copy | size |");
    for (size_t j = 0; j < DIST_ND; j++)
        fprintf(out, " %d |", dist_d[j]);
    fprintf(out, "\n|---|---:|");
    for (size_t j = 0; j < DIST_ND; j++)
        fprintf(out, "---:|");
    fprintf(out, "\n");
    /* The source at a page boundary: procmem's kernel copies go through
     * a page-aligned buffer of the kernel's, so for it the destination's
     * own page offset matters, which is then the distance too. */
    char *src = buf;
    for (int how = 0; how < DC_N; how++) {
        if ((how == DC_CMA || how == DC_CMA_BOUNCE) && !cma) {
            fprintf(out, "| %s | - | not here: %s |\n", dist_names[how], why);
            continue;
        }
        if (how >= DC_PM && !pm) {
            fprintf(out, "| %s | - | not here: %s |\n", dist_names[how], pmwhy);
            continue;
        }
        bool bounce = how == DC_CMA_BOUNCE || how == DC_PM_BOUNCE;
        fy_copy_alias = how == DC_FYCOPY || bounce;
        fy_copy_cma_alias = bounce;
        for (size_t s = 0; s < DIST_NS; s++) {
            size_t n = dist_sizes[s];
            fprintf(out, "| %s | %zu KiB |", dist_names[how], n >> 10);
            for (size_t j = 0; j < DIST_ND; j++) {
                /* The destination two pages past the source's end, at
                 * the distance's page offset. */
                char *dst = buf + max + 2 * 4096 + dist_d[j];
                double g = dist_time(how, dst, src, n, o->repeats, o->quick);
                if (g < 0)
                    fprintf(out, " failed |");
                else
                    fprintf(out, " %.1f |", g);
            }
            fprintf(out, "\n");
            fflush(out);
        }
    }
    fy_copy_alias = alias;
    fy_copy_cma_alias = cma_alias;
    fy_xfer_procmem_ops.finalize(); /* its /proc/self/mem file */
    munmap(buf, len);
    return 0;
}

char *lab_distance_section;

void lab_exp_distance(const struct lab_opts *o)
{
    lab_distance_section =
        lab_capture(lab_distance_run, o, "## Copy distance\n\n");
}
