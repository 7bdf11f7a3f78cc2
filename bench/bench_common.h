/* SPDX-License-Identifier: MIT */
/* Helpers shared by the OSU-style benchmark programs (latency.c, bw.c):
 * option values with K/M suffixes, size lists, optional self-binding to a
 * core, parking extra ranks, and the median. Header-only so each program
 * still builds with a bare `mpicc latency.c` from any MPI implementation. */
#ifndef FY_BENCH_COMMON_H
#define FY_BENCH_COMMON_H

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#if defined(__linux__)
#include <sched.h>
#include <unistd.h>
#endif

/* Largest message any benchmark here moves: 4 MiB, as OSU's default. */
#define BENCH_MAX_SIZE ((size_t)4 << 20)
/* Enough entries for 0, 1, 2, 4, ... 4 MiB or a long -s list. */
#define BENCH_MAX_SIZES 64

/* fprintf to stderr when loud (rank 0), so a bad option is explained once
 * rather than by every rank. */
static inline void bench_complain(int loud, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline void bench_complain(int loud, const char *fmt, ...)
{
    if (!loud)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

/* Parse "123", "64K", "4M" (binary multiples) into *out. Returns 0 or -1. */
static inline int bench_parse_size(const char *text, size_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || end == text || text[0] == '-')
        return -1;
    unsigned long long mult = 1;
    if (*end == 'k' || *end == 'K')
        mult = 1ull << 10;
    else if (*end == 'm' || *end == 'M')
        mult = 1ull << 20;
    if (mult != 1)
        end++;
    if (*end != '\0' || v > (unsigned long long)BENCH_MAX_SIZE / mult)
        return -1;
    *out = (size_t)(v * mult);
    return 0;
}

/* Parse a positive int option value. Returns 0 or -1. */
static inline int bench_parse_int(const char *text, int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v <= 0 || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

/* Parse a duration in seconds (> 0, at most a day). Returns 0 or -1. */
static inline int bench_parse_seconds(const char *text, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !(v > 0) || v > 86400)
        return -1;
    *out = v;
    return 0;
}

/* Parse "8" or "0,1,8,64K" into sizes[]; returns the count, or -1 on a bad
 * entry or too many of them. */
static inline int bench_parse_size_list(const char *text, size_t *sizes,
                                        int cap)
{
    char buf[512];
    if (strlen(text) >= sizeof(buf))
        return -1;
    strcpy(buf, text);
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        if (n == cap || bench_parse_size(tok, &sizes[n]) != 0)
            return -1;
        n++;
    }
    return n > 0 ? n : -1;
}

/* Fill sizes[] with first, then powers of two from 1 up to max. */
static inline int bench_default_sizes(size_t first, size_t max, size_t *sizes,
                                      int cap)
{
    int n = 0;
    if (first == 0 && n < cap)
        sizes[n++] = 0;
    for (size_t s = 1; s <= max && n < cap; s *= 2)
        sizes[n++] = s;
    return n;
}

/* Pin the calling process to core (rank % online cores). Done by the
 * program itself, not by the launcher, so all MPI implementations compared
 * get exactly the same placement whatever their launchers' defaults.
 * Returns 0, or -1 if unsupported or refused. */
static inline int bench_bind_self(int rank)
{
#if defined(__linux__) && defined(CPU_SET)
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu <= 0)
        return -1;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((int)(rank % ncpu), &set);
    return sched_setaffinity(0, sizeof(set), &set) == 0 ? 0 : -1;
#else
    (void)rank;
    return -1;
#endif
}

/* Tags used by the programs; any value below 32767 is valid in MPI. */
enum { BENCH_TAG_DATA = 1, BENCH_TAG_ACK = 2, BENCH_TAG_PARK = 3 };

/* Ranks >= 2 take no part in the measurement: they sit in a blocking
 * MPI_Recv from rank 0 for its whole length, which is what "ranks 2-3 wait
 * in MPI_Recv while 0 and 1 ping-pong" means on an oversubscribed node. How
 * an implementation waits there (spin, yield, block) is what the
 * oversubscribed scenario measures. */
static inline void bench_park(void)
{
    char byte;
    MPI_Recv(&byte, 1, MPI_CHAR, 0, BENCH_TAG_PARK, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
}

/* Called by rank 0 when it is done: releases every parked rank. */
static inline void bench_unpark_all(int nranks)
{
    char byte = 0;
    for (int r = 2; r < nranks; r++)
        MPI_Send(&byte, 1, MPI_CHAR, r, BENCH_TAG_PARK, MPI_COMM_WORLD);
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n-1] (sorts v in place); n >= 1. */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* MPI_Get_library_version's first line with tabs turned into spaces, so
 * the '#' comment line the programs print stays one line of plain text.
 * buf must hold MPI_MAX_LIBRARY_VERSION_STRING bytes. */
static inline void bench_lib_version(char *buf)
{
    int len = 0;
    buf[0] = '\0';
    MPI_Get_library_version(buf, &len);
    buf[strcspn(buf, "\n")] = '\0';
    for (char *c = buf; *c != '\0'; c++)
        if (*c == '\t')
            *c = ' ';
}

/* A page-aligned, touched buffer, so first-touch page faults stay out of
 * the timed loops. Returns NULL on failure. */
static inline void *bench_alloc(size_t bytes, int fill)
{
    size_t len = bytes ? (bytes + 4095) / 4096 * 4096 : 4096;
    void *p = aligned_alloc(4096, len);
    if (p != NULL)
        memset(p, fill, len);
    return p;
}

#endif /* FY_BENCH_COMMON_H */
