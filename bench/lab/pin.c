/* SPDX-License-Identifier: MIT */
/* ferry-bench --pin: seed 004's pin-down cache experiment on this machine,
 * in one process. A transfer pins its source (send budget) and its
 * destination (receive budget) through the library's cache with the real
 * pinner (mlock), copies (memcpy standing in for the NIC's DMA), and
 * releases both. At 100 % hit ratio every transfer reuses the same two
 * buffers, whose registrations stay cached; at 0 % it walks a ring of
 * buffers twice the budget, so with LRU eviction every acquire misses and
 * costs an munlock (eviction) plus an mlock. "no pinning" is the copy
 * alone. MB/s = 10^6 transfer bytes per second of this thread's CPU time
 * (user + system: the pinning is system time), median of the repeats,
 * the three modes interleaved within each repeat. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "lab.h"
#include "util/util.h"
#include "xfer/pin.h"

static const size_t pin_sizes[] = {4u << 10,   16u << 10, 64u << 10,
                                   256u << 10, 1u << 20,  4u << 20};
#define PIN_NSIZES (sizeof(pin_sizes) / sizeof(pin_sizes[0]))
#define PIN_BUDGET (8u << 20) /* per direction */
#define PIN_RING (2 * PIN_BUDGET)

enum { PIN_HIT, PIN_MISS, PIN_NONE, PIN_NMODES };
static const char *const pin_mode_names[PIN_NMODES] = {"100% hit", "0% hit",
                                                       "no pinning"};

static uint64_t pin_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int pin_iters(size_t bytes, bool quick)
{
    size_t volume = quick ? (16u << 20) : (64u << 20);
    size_t n = volume / bytes;
    return n < 8 ? 8 : (int)n;
}

/* One repeat of one mode at one size: MB/s, or -errno. */
static double pin_measure(struct fy_pin_cache *c, int mode, char *src,
                          char *dst, size_t bytes, bool quick)
{
    size_t slots = PIN_RING / bytes;
    int iters = pin_iters(bytes, quick);
    uint64_t t0 = pin_cpu_ns();
    for (int i = 0; i < iters; i++) {
        size_t off = mode == PIN_MISS ? (size_t)i % slots * bytes : 0;
        struct fy_pin_entry *se = NULL, *re = NULL;
        if (mode != PIN_NONE) {
            int rc =
                fy_pin_cache_acquire(c, src + off, bytes, FY_PIN_SEND, &se);
            if (rc == 0)
                rc =
                    fy_pin_cache_acquire(c, dst + off, bytes, FY_PIN_RECV, &re);
            if (rc != 0) {
                if (se)
                    fy_pin_cache_release(c, se);
                return rc;
            }
        }
        memcpy(dst + off, src + off, bytes);
        __asm__ volatile("" : : "r"(dst) : "memory");
        if (mode != PIN_NONE) {
            fy_pin_cache_release(c, re);
            fy_pin_cache_release(c, se);
        }
    }
    uint64_t t1 = pin_cpu_ns();
    return (double)bytes * iters * 1e3 / (double)(t1 > t0 ? t1 - t0 : 1);
}

static void *pin_map(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    memset(p, 1, len); /* fault in: measure pinning, not first touch */
    return p;
}

int lab_pin_run(const struct lab_opts *o, FILE *out)
{
    int repeats = o->repeats;
    if (fy_env_load() != 0) /* FERRY_PIN_CACHE, FERRY_LOG */
        return 2;
    char *src = pin_map(PIN_RING), *dst = pin_map(PIN_RING);
    if (!src || !dst) {
        fprintf(stderr, "ferry-bench: out of memory for --pin\n");
        return 1;
    }
    struct fy_pin_limits lim = {{PIN_BUDGET, PIN_BUDGET}};
    /* One cache per mode, so each mode's counters are its own. */
    struct fy_pin_cache *cache[PIN_NMODES] = {NULL};
    for (int m = 0; m < PIN_NMODES; m++)
        if (fy_pin_cache_create(&fy_pin_mlock_ops, NULL, &lim, &cache[m]) !=
            0) {
            fprintf(stderr, "ferry-bench: cannot create a pin cache\n");
            return 1;
        }
    fprintf(out, "## Pin-down cache (seed 004)\n\n");
    if (!fy_pin_hooks_active())
        fprintf(out, "Invalidation hooks are not active in this process: the "
                     "cache deregisters at every release, so \"100%% hit\" "
                     "is not a hit ratio here.\n\n");
    /* Warm-up transfer: fails here if mlock is not allowed. */
    struct fy_pin_entry *e;
    int rc = fy_pin_cache_acquire(cache[PIN_HIT], src, 4096, FY_PIN_SEND, &e);
    if (rc != 0) {
        fprintf(out,
                "Not measured: mlock failed (%s); raise RLIMIT_MEMLOCK "
                "(ulimit -l) to at least %u MiB.\n",
                strerror(-rc), 2 * PIN_BUDGET >> 20);
        for (int m = 0; m < PIN_NMODES; m++)
            fy_pin_cache_destroy(cache[m]);
        munmap(src, PIN_RING);
        munmap(dst, PIN_RING);
        return 0;
    }
    fy_pin_cache_release(cache[PIN_HIT], e);

    double mbs[PIN_NSIZES][PIN_NMODES][LAB_MAX_REPEATS];
    for (int r = 0; r < repeats; r++) {
        for (size_t s = 0; s < PIN_NSIZES; s++) {
            for (int m = 0; m < PIN_NMODES; m++) {
                double v =
                    pin_measure(cache[m], m, src, dst, pin_sizes[s], o->quick);
                if (v < 0) {
                    fprintf(out,
                            "Not measured: acquire failed at %zu "
                            "bytes (%s).\n",
                            pin_sizes[s], strerror((int)-v));
                    return 1;
                }
                mbs[s][m][r] = v;
            }
        }
        fprintf(stderr, "ferry-bench --pin: repeat %d/%d\n", r + 1, repeats);
    }

    fprintf(out,
            "A transfer = acquire its source (send) and destination "
            "(receive) from the cache with the mlock pinner, memcpy (the "
            "DMA), release both. 100%% hit: the same two buffers every "
            "time; 0%% hit: a ring of %u MiB per direction through %u MiB "
            "budgets (LRU: every acquire misses, evicts and pins); no "
            "pinning: memcpy alone. MB/s = 10^6 bytes per second of thread "
            "CPU time, median of %d repeats, modes interleaved.\n\n",
            PIN_RING >> 20, PIN_BUDGET >> 20, repeats);
    fprintf(out, "| size | 100%% hit MB/s | 0%% hit MB/s | 0%%/100%% | "
                 "no pinning MB/s | pin+unpin us per miss |\n"
                 "|---|---|---|---|---|---|\n");
    for (size_t s = 0; s < PIN_NSIZES; s++) {
        double med[PIN_NMODES];
        for (int m = 0; m < PIN_NMODES; m++)
            med[m] = lab_median(mbs[s][m], repeats);
        /* Time a miss transfer costs over a hit one: two pins (send and
         * receive) and two evictions. */
        double b = (double)pin_sizes[s];
        double extra_us = b / med[PIN_MISS] - b / med[PIN_HIT];
        if (pin_sizes[s] >= (1u << 20))
            fprintf(out, "| %zu MiB |", pin_sizes[s] >> 20);
        else
            fprintf(out, "| %zu KiB |", pin_sizes[s] >> 10);
        fprintf(out, " %.1f | %.1f | %.2f | %.1f | %.1f |\n", med[PIN_HIT],
                med[PIN_MISS], med[PIN_MISS] / med[PIN_HIT], med[PIN_NONE],
                extra_us);
    }
    fprintf(out, "\nSeed 004 (PM on Myrinet, Pentium Pro 200): 108.8 MB/s at "
                 "100%% hit, 78.7 MB/s at 0%% hit (ratio 0.72).\n\n");
    fprintf(out, "Counters per mode (fy_pin_cache_stats):\n\n"
                 "| mode | hits | misses | evictions | pinned high-water "
                 "send/recv KiB |\n|---|---|---|---|---|\n");
    for (int m = 0; m < PIN_NMODES; m++) {
        struct fy_pin_stats st;
        fy_pin_cache_stats(cache[m], &st);
        fprintf(out, "| %s | %llu | %llu | %llu | %llu/%llu |\n",
                pin_mode_names[m], (unsigned long long)st.hits,
                (unsigned long long)st.misses, (unsigned long long)st.evictions,
                (unsigned long long)st.pinned_hw[FY_PIN_SEND] >> 10,
                (unsigned long long)st.pinned_hw[FY_PIN_RECV] >> 10);
    }
    fprintf(out, "\n");
    for (int m = 0; m < PIN_NMODES; m++)
        fy_pin_cache_destroy(cache[m]);
    munmap(src, PIN_RING);
    munmap(dst, PIN_RING);
    return 0;
}

char *lab_pin_section;

void lab_exp_pin(const struct lab_opts *o)
{
    lab_pin_section = lab_capture(lab_pin_run, o, NULL);
}

char *lab_capture(int (*run)(const struct lab_opts *, FILE *),
                  const struct lab_opts *o, const char *heading)
{
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    if (!f)
        return NULL;
    if (heading)
        fputs(heading, f);
    int rc = run(o, f);
    fputs(heading ? "\n" : "", f);
    fclose(f);
    if (rc != 0) {
        free(text);
        return NULL;
    }
    return text;
}
