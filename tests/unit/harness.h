/* SPDX-License-Identifier: MIT */
/* A tiny TAP harness for Ferry's unit tests: one header, no library. A test
 * prints "1..N", then "ok K - name" / "not ok K - name" per check, with both
 * operands printed as "#" diagnostics when a comparison fails, and returns
 * tap_done() from main so CTest sees the verdict in the exit status.
 *
 *     #include "harness.h"
 *     int main(void)
 *     {
 *         tap_plan(3);                       // optional: tap_done() prints
 *         TAP_OK(p != NULL, "alloc");        // the plan if none was given
 *         TAP_EQ_INT(rc, 0, "init rc");
 *         TAP_EQ_MEM(dst, src, len, "copy of %zu bytes", len);
 *         return tap_done();
 *     }
 *
 * Every check macro evaluates each operand exactly once and yields 1 on
 * success, 0 on failure, so a test can stop early: if (!TAP_OK(...)) ...
 * A test that cannot run here (e.g. the kernel forbids CMA) calls
 * tap_skip_all("reason"): it prints "1..0 # SKIP reason" and exits with
 * TAP_SKIP_STATUS (77), which tests/CMakeLists.txt maps to a CTest skip.
 * Not thread safe: call the checks from one thread. */
#ifndef FY_TEST_HARNESS_H
#define FY_TEST_HARNESS_H

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAP_SKIP_STATUS 77

/* One test program is one translation unit, so file-scope state is fine. */
static int tap_planned = -1; /* -1: no plan printed yet */
static int tap_count;        /* checks run so far */
static int tap_failures;     /* checks that failed */
static int tap_skipped;      /* checks skipped (tap_skip) */

static inline void tap_plan(int n)
{
    tap_planned = n;
    printf("1..%d\n", n);
    fflush(stdout);
}

/* Print a "# ..." diagnostic line (TAP consumers show these verbatim). */
__attribute__((format(printf, 1, 2))) static inline void
tap_diag(const char *fmt, ...)
{
    va_list ap;
    fputs("# ", stdout);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
}

/* Report one check. 'where' and 'expr' locate a failure in the source. */
__attribute__((format(printf, 5, 0))) static inline int
tap_report_v(int pass, const char *file, int line, const char *expr,
             const char *fmt, va_list ap)
{
    tap_count++;
    if (!pass)
        tap_failures++;
    printf("%s %d - ", pass ? "ok" : "not ok", tap_count);
    vprintf(fmt, ap);
    fputc('\n', stdout);
    if (!pass)
        printf("#   failed at %s:%d: %s\n", file, line, expr);
    fflush(stdout);
    return pass;
}

__attribute__((format(printf, 5, 6))) static inline int
tap_report(int pass, const char *file, int line, const char *expr,
           const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pass = tap_report_v(pass, file, line, expr, fmt, ap);
    va_end(ap);
    return pass;
}

__attribute__((format(printf, 6, 7))) static inline int
tap_eq_int(long long got, long long want, const char *file, int line,
           const char *expr, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int pass = tap_report_v(got == want, file, line, expr, fmt, ap);
    va_end(ap);
    if (!pass)
        printf("#   got:      %lld (0x%llx)\n#   expected: %lld (0x%llx)\n",
               got, (unsigned long long)got, want, (unsigned long long)want);
    return pass;
}

__attribute__((format(printf, 6, 7))) static inline int
tap_eq_size(size_t got, size_t want, const char *file, int line,
            const char *expr, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int pass = tap_report_v(got == want, file, line, expr, fmt, ap);
    va_end(ap);
    if (!pass)
        printf("#   got:      %zu\n#   expected: %zu\n", got, want);
    return pass;
}

__attribute__((format(printf, 6, 7))) static inline int
tap_eq_str(const char *got, const char *want, const char *file, int line,
           const char *expr, const char *fmt, ...)
{
    int same = (got == NULL && want == NULL) ||
               (got != NULL && want != NULL && strcmp(got, want) == 0);
    va_list ap;
    va_start(ap, fmt);
    int pass = tap_report_v(same, file, line, expr, fmt, ap);
    va_end(ap);
    if (!pass)
        printf("#   got:      \"%s\"\n#   expected: \"%s\"\n",
               got ? got : "(null)", want ? want : "(null)");
    return pass;
}

/* On a mismatch, show the first differing offset and up to 16 bytes of
 * each side from there: enough to tell a shifted copy from a torn one. */
__attribute__((format(printf, 7, 8))) static inline int
tap_eq_mem(const void *got, const void *want, size_t n, const char *file,
           int line, const char *expr, const char *fmt, ...)
{
    const unsigned char *g = got, *w = want;
    size_t off = 0;
    while (off < n && g[off] == w[off])
        off++;
    va_list ap;
    va_start(ap, fmt);
    int pass = tap_report_v(off == n, file, line, expr, fmt, ap);
    va_end(ap);
    if (!pass) {
        size_t end = off + 16 < n ? off + 16 : n;
        printf("#   first difference at offset %zu of %zu\n#   got:     ", off,
               n);
        for (size_t i = off; i < end; i++)
            printf(" %02x", g[i]);
        printf("\n#   expected:");
        for (size_t i = off; i < end; i++)
            printf(" %02x", w[i]);
        printf("\n");
    }
    return pass;
}

/* Skip the whole program, e.g. when the machine forbids a mechanism. */
__attribute__((noreturn)) static inline void tap_skip_all(const char *reason)
{
    printf("1..0 # SKIP %s\n", reason);
    fflush(stdout);
    exit(TAP_SKIP_STATUS);
}

/* Skip one planned check. It is not a pass: a program with a skipped
 * check and no failure exits TAP_SKIP_STATUS, so CTest reports the whole
 * test as skipped (with the reasons in its output), never as passed. */
static inline void tap_skip(const char *reason)
{
    tap_count++;
    tap_skipped++;
    printf("ok %d # SKIP %s\n", tap_count, reason);
    fflush(stdout);
}

/* Finish: print the plan if none was given, and return the exit status:
 * failure when a check failed or the count misses the plan, else
 * TAP_SKIP_STATUS when a check was skipped, else 0. */
static inline int tap_done(void)
{
    if (tap_planned < 0)
        printf("1..%d\n", tap_count);
    else if (tap_planned != tap_count)
        printf("# planned %d checks but ran %d\n", tap_planned, tap_count);
    if (tap_failures)
        printf("# %d of %d checks failed\n", tap_failures, tap_count);
    if (tap_failures || (tap_planned >= 0 && tap_planned != tap_count)) {
        fflush(stdout);
        return EXIT_FAILURE;
    }
    if (tap_skipped) {
        printf("# %d of %d checks skipped: reported as a skip, not a pass\n",
               tap_skipped, tap_count);
        fflush(stdout);
        return TAP_SKIP_STATUS;
    }
    fflush(stdout);
    return EXIT_SUCCESS;
}

/* The check macros: the trailing arguments are a printf-style test name. */
#define TAP_OK(cond, ...)                                                      \
    tap_report(!!(cond), __FILE__, __LINE__, #cond, __VA_ARGS__)
#define TAP_EQ_INT(got, want, ...)                                             \
    tap_eq_int((long long)(got), (long long)(want), __FILE__, __LINE__,        \
               #got " == " #want, __VA_ARGS__)
#define TAP_EQ_SIZE(got, want, ...)                                            \
    tap_eq_size((size_t)(got), (size_t)(want), __FILE__, __LINE__,             \
                #got " == " #want, __VA_ARGS__)
#define TAP_EQ_STR(got, want, ...)                                             \
    tap_eq_str((got), (want), __FILE__, __LINE__, #got " == " #want,           \
               __VA_ARGS__)
#define TAP_EQ_MEM(got, want, n, ...)                                          \
    tap_eq_mem((got), (want), (n), __FILE__, __LINE__,                         \
               "memcmp(" #got ", " #want ", " #n ")", __VA_ARGS__)

#endif /* FY_TEST_HARNESS_H */
