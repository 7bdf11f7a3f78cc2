/* SPDX-License-Identifier: MIT */
/* Logging to stderr with the rank in every line, and fatal exits. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"

enum fy_log_level fy_log_threshold = FY_LOG_WARN;
int fy_log_rank = -1;

static void vlog(const char *level, const char *file, int line, const char *fmt,
                 va_list ap)
{
    char msg[1024];
    int n = snprintf(msg, sizeof(msg), "Ferry[%d] %s: ", fy_log_rank, level);
    if (n < 0)
        return;
    if (file && fy_log_threshold >= FY_LOG_DEBUG)
        n += snprintf(msg + n, sizeof(msg) - (size_t)n, "%s:%d: ",
                      strrchr(file, '/') ? strrchr(file, '/') + 1 : file, line);
    if ((size_t)n < sizeof(msg))
        n += vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
    if ((size_t)n >= sizeof(msg) - 1)
        n = (int)sizeof(msg) - 2;
    msg[n++] = '\n';
    /* One write() so lines of different ranks do not interleave. */
    ssize_t w = write(STDERR_FILENO, msg, (size_t)n);
    (void)w;
}

void fy_log_write(enum fy_log_level lvl, const char *file, int line,
                  const char *fmt, ...)
{
    static const char *names[] = {"error", "warning", "info", "debug"};
    va_list ap;
    va_start(ap, fmt);
    vlog(names[lvl], file, line, fmt, ap);
    va_end(ap);
}

void fy_fatal(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("fatal", NULL, 0, fmt, ap);
    va_end(ap);
    _exit(code);
}
