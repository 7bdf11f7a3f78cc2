/* SPDX-License-Identifier: MIT */
/* Ferry utilities: logging, the FERRY_* environment table, timers, and the
 * small helpers every module uses. No module below this one. */
#ifndef FY_UTIL_H
#define FY_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FY_CACHELINE 64
#define FY_LIKELY(x) __builtin_expect(!!(x), 1)
#define FY_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define FY_MIN(a, b) ((a) < (b) ? (a) : (b))
#define FY_MAX(a, b) ((a) > (b) ? (a) : (b))
#define FY_ALIGN_UP(x, a) (((x) + (a)-1) & ~((__typeof__(x))(a)-1))
#define FY_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define FY_INTERNAL __attribute__((visibility("hidden")))

/* ---- logging ---------------------------------------------------------- */

enum fy_log_level { FY_LOG_ERROR, FY_LOG_WARN, FY_LOG_INFO, FY_LOG_DEBUG };

/* Current threshold, from FERRY_LOG (error|warn|info|debug). */
extern enum fy_log_level fy_log_threshold;
/* The world rank printed in every line; -1 before bootstrap. */
extern int fy_log_rank;

void fy_log_write(enum fy_log_level lvl, const char *file, int line,
                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#define FY_ERROR(...)                                                          \
    fy_log_write(FY_LOG_ERROR, __FILE__, __LINE__, __VA_ARGS__)
#define FY_WARN(...)                                                           \
    do {                                                                       \
        if (fy_log_threshold >= FY_LOG_WARN)                                   \
            fy_log_write(FY_LOG_WARN, __FILE__, __LINE__, __VA_ARGS__);        \
    } while (0)
#define FY_INFO(...)                                                           \
    do {                                                                       \
        if (fy_log_threshold >= FY_LOG_INFO)                                   \
            fy_log_write(FY_LOG_INFO, __FILE__, __LINE__, __VA_ARGS__);        \
    } while (0)
#ifdef FERRY_DEBUG
#define FY_DEBUG(...)                                                          \
    do {                                                                       \
        if (fy_log_threshold >= FY_LOG_DEBUG)                                  \
            fy_log_write(FY_LOG_DEBUG, __FILE__, __LINE__, __VA_ARGS__);       \
    } while (0)
#else
#define FY_DEBUG(...) ((void)0)
#endif

/* Print a fatal message and terminate this process with status 'code'
 * (the launcher then takes the job down). */
_Noreturn void fy_fatal(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- environment table ------------------------------------------------ */

enum fy_env_type { FY_ENV_BOOL, FY_ENV_INT, FY_ENV_SIZE, FY_ENV_STRING };

/* One FERRY_* variable. The table in env.c declares every one of them;
 * ferry-info prints it. 'value' holds the parsed current value. */
struct fy_env_var {
    const char *name;
    enum fy_env_type type;
    const char *def;  /* default, as text */
    const char *help; /* one line */
    union {
        long long i; /* INT, SIZE, BOOL (0/1) */
        const char *s;
    } value;
    bool from_env; /* set by the user rather than defaulted */
};

enum fy_env_id {
    FY_ENV_LOG,
    FY_ENV_XFER,
    FY_ENV_EAGER_MAX,
    FY_ENV_FASTBOX_MAX,
    FY_ENV_CELL_SIZE,
    FY_ENV_CELLS,
    FY_ENV_SHMBUF_SIZE,
    FY_ENV_SPIN,
    FY_ENV_WAIT,
    FY_ENV_NO_CMA,
    FY_ENV_TUNING,
    FY_ENV_SPLIT_MIN,
    FY_ENV_XFER_REQUIRE,
    FY_ENV_SHMBUF_PADS,
    FY_ENV_STATS,
    FY_ENV_COLL,
    FY_ENV_COLL_CMA_MIN,
    FY_ENV_COLL_SLICE_MIN,
    FY_ENV_COLL_DIRECT_MIN,
    FY_ENV_PROTO,
    FY_ENV_BTP,
    FY_ENV_BTP1,
    FY_ENV_PUSH_BUF,
    FY_ENV_RECV_WRITE,
    FY_ENV_RECV_WRITE_MIN,
    FY_ENV_AUTO_PUSH_MAX,
    FY_ENV_NET_PUSH_MAX,
    FY_ENV_PUSH_MAX,
    FY_ENV_BOOT,
    FY_ENV_NODES,
    FY_ENV_NET,
    FY_ENV_TCP_QUEUE,
    FY_ENV_TCP_CC,
    FY_ENV_OFI_PROVIDER,
    FY_ENV_OFI_RMA,
    FY_ENV_OFI_WAIT,
    FY_ENV_PIN_MAX,
    FY_ENV_PIN_SEND_MAX,
    FY_ENV_PIN_RECV_MAX,
    FY_ENV_PIN_CACHE,
    FY_ENV_RMA_THREAD,
    FY_ENV_MT_LOCKS,
    FY_ENV_RMA_PROCMEM_MAX,
    FY_ENV_RMA_NT_MIN,
    FY_ENV_RMA_AM_MAX,
    FY_ENV_RMA_SPLIT_MIN,
    FY_ENV_RMA_REMAP,
    FY_ENV_UNEXP_CACHE,
    FY_ENV_COPY_ALIAS,
    FY_ENV_COUNT
};

extern struct fy_env_var fy_env[FY_ENV_COUNT];

/* Parse every FERRY_* variable. Returns 0, or -EINVAL after logging which
 * variable is malformed (the caller fails MPI_Init cleanly). */
int fy_env_load(void);
static inline long long fy_env_int(enum fy_env_id id)
{
    return fy_env[id].value.i;
}
static inline const char *fy_env_str(enum fy_env_id id)
{
    return fy_env[id].value.s;
}

/* Parse "123", "64k", "4M", "1G" into bytes. Returns 0 or -EINVAL. */
int fy_parse_size(const char *s, long long *out);

/* ---- time and spinning ------------------------------------------------ */

double fy_wtime(void); /* seconds, CLOCK_MONOTONIC */

static inline void fy_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

/* Number of CPUs this process may run on. */
int fy_online_cpus(void);

#endif /* FY_UTIL_H */
