/* SPDX-License-Identifier: MIT */
/* mpiexec: Ferry's launcher for one machine. It forks N ranks with no daemon,
 * hands each the bootstrap contract in its environment (FERRY_RANK, FERRY_SIZE,
 * FERRY_JOBID, FERRY_NCPUS and an inherited memfd named by FERRY_SHM_FD), binds
 * them to CPUs, forwards signals, optionally tags their output, and turns the
 * ranks' fates into one exit status. It links nothing of the MPI library. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef FERRY_VERSION_STRING
#define FERRY_VERSION_STRING "unknown"
#endif

#define FY_LAUNCH_MAX_RANKS 4096
/* Grace between SIGTERM and SIGKILL when the job is torn down: long enough
 * for a rank to die of SIGTERM (and run its handler, if any), short enough
 * that every rank is gone well within 0.5 s of the first failure. */
#define FY_LAUNCH_KILL_GRACE_S 0.2
/* A tagged line longer than this is cut with a newline, so one rank printing
 * without newlines cannot make the launcher buffer without bound. */
#define FY_LAUNCH_LINE_MAX ((size_t)1 << 20)
/* While stdin is a terminal we do not own (job in the background), look
 * again this often whether we became the foreground job. */
#define FY_LAUNCH_FG_RECHECK_MS 1000

/* Exit statuses of the launcher's own failures (ranks' pass through). */
#define FY_LAUNCH_EXIT_SYSTEM 1
#define FY_LAUNCH_EXIT_USAGE 2
#define FY_LAUNCH_EXIT_TIMEOUT 124
#define FY_LAUNCH_EXIT_NOEXEC 126
#define FY_LAUNCH_EXIT_NOTFOUND 127

/* The contract variables are always set by us and never inherited from our
 * own environment: a nested mpiexec must not leak its parent's rank. */
static const char *const fy_launch_contract_vars[] = {
    "FERRY_RANK",  "FERRY_SIZE",   "FERRY_JOBID",
    "FERRY_NCPUS", "FERRY_SHM_FD", "FERRY_KVS_FD",
};

enum fy_launch_bind { FY_BIND_DEFAULT, FY_BIND_CORE, FY_BIND_NONE };

struct fy_launch_opts {
    int nranks;
    enum fy_launch_bind bind;
    bool tag_output;
    double timeout_s;         /* 0: none */
    const char *timeout_text; /* as the user wrote it, for the message */
    char **extra_env;         /* NAME=VALUE from -genv/-env/-x */
    int n_extra_env;
    char **argv; /* program and its arguments, NULL-terminated */
};

/* One stream (stdout or stderr) of one rank under --tag-output. */
struct fy_launch_stream {
    int fd;    /* read end of the rank's pipe, -1 once closed */
    char *buf; /* bytes of the current, incomplete line */
    size_t len;
    size_t cap;
};

struct fy_launch_rank {
    pid_t pid;        /* 0 before fork */
    bool running;     /* forked and not yet reaped: the pid is ours to kill */
    bool exec_failed; /* reported through the error pipe */
    struct fy_launch_stream out[2]; /* [0] stdout, [1] stderr */
};

struct fy_launch_job {
    struct fy_launch_opts opts;
    char *prog_path; /* resolved program */
    struct fy_launch_rank *ranks;
    int nrunning;
    pid_t pgid;     /* process group of the ranks, 0 until the first fork */
    pid_t self;     /* our pid, for the children's parent-death check */
    int sigfd;      /* signalfd: SIGCHLD and the signals we forward */
    int errpipe[2]; /* children report exec failure as {rank, errno} */
    int devnull;
    int shmfd; /* the segment of the node of the rank being started */
    int kvsfd;
    /* FERRY_NODES: one segment per virtual node, nodes = 1 normally. */
    int nodes;
    int *shmfds;
    char shm_slot[32];    /* the FERRY_SHM_FD entry of the ranks' environment */
    struct rlimit nofile; /* as we found it, restored in the children */
    void (*sigpipe_orig)(int);

    /* CPUs we may use, in order; rank i binds to cpus[i % ncpus]. */
    int *cpus;
    int ncpus;
    bool bind;
    cpu_set_t *cpuset; /* scratch set the child fills */
    size_t cpuset_size;

    /* stdin relay, used only when our stdin is a terminal (see main). */
    bool relay;
    int relay_fd;   /* write end to rank 0, -1 once closed */
    bool relay_eof; /* nothing more will be read from our stdin */
    char relay_buf[4096];
    size_t relay_len;

    bool sink_broken[2]; /* our stdout/stderr hit EPIPE under --tag-output */

    /* outcome */
    bool failed;     /* the first failure (or timeout) is recorded */
    int exit_status; /* what we exit with */
    bool killing;    /* SIGTERM sent to the whole job */
    bool killed_hard;
    double kill_deadline;
    double timeout_deadline; /* 0: none */
    int user_signals;        /* terminating signals forwarded so far */
};

static const char *fy_launch_name = "mpiexec";

static double fy_launch_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Write all of buf to fd. Returns 0 or a negative errno (EPIPE included).
 * Blocking on purpose: a slow reader of our output slows the ranks down
 * instead of making us buffer without bound. */
static int fy_launch_fd_write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, buf, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) { /* someone made our stdout non-blocking */
                struct pollfd p = {.fd = fd, .events = POLLOUT};
                (void)poll(&p, 1, -1);
                continue;
            }
            return -errno;
        }
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Messages from the launcher itself, each written with one write() so they
 * never land in the middle of a tagged line we are relaying to stderr. */
static void fy_launch_msg(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static void fy_launch_msg(const char *fmt, ...)
{
    char line[1024];
    int off = snprintf(line, sizeof(line), "%s: ", fy_launch_name);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line + off, sizeof(line) - (size_t)off - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = (size_t)off + (size_t)n;
    if (len > sizeof(line) - 2)
        len = sizeof(line) - 2;
    line[len++] = '\n';
    (void)fy_launch_fd_write_all(STDERR_FILENO, line, len);
}

/* ---- options ------------------------------------------------------------ */

static void fy_launch_usage_print(FILE *f)
{
    fprintf(
        f,
        "Usage: %s -n N [options] [--] program [args...]\n"
        "Run N copies of program on this machine as one MPI job (Ferry).\n"
        "\n"
        "  -n N, -np N           number of ranks, 1..%d (default 1)\n"
        "  --bind-to core|none   bind rank i to the i-th CPU we may use;\n"
        "                        default: core if N <= CPUs, else none\n"
        "  --tag-output, -l      prefix every output line with [rank]\n"
        "  --timeout S           kill the job after S seconds, exit 124\n"
        "                        (default $MPIEXEC_TIMEOUT; none if unset)\n"
        "  -genv NAME VALUE      set NAME=VALUE for every rank (also -env)\n"
        "  -x NAME[=VALUE]       same; NAME alone passes our own value\n"
        "  --oversubscribe       accepted; oversubscription is always allowed\n"
        "  --help, --version\n"
        "Long options take one or two dashes; '--' ends the options.\n"
        "\n"
        "Exit status: 0 if every rank exits 0, else the first failing rank's\n"
        "status (128+S for a death by signal S); 124 on timeout; 127 or 126\n"
        "if the program cannot be found or executed; 2 for usage errors.\n",
        fy_launch_name, FY_LAUNCH_MAX_RANKS);
}

/* Does argument 'arg' name option 'name' (one or two leading dashes)?
 * For options taking a value, "--name=value" puts value in *inline_out. */
static bool fy_launch_opt_is(const char *arg, const char *name,
                             const char **inline_out)
{
    if (arg[0] != '-')
        return false;
    arg += (arg[1] == '-') ? 2 : 1;
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0)
        return false;
    if (arg[n] == '\0') {
        if (inline_out)
            *inline_out = NULL;
        return true;
    }
    if (arg[n] == '=' && inline_out) {
        *inline_out = arg + n + 1;
        return true;
    }
    return false;
}

/* Fetch the value of option argv[*i]: inline, or the next argument. */
static const char *fy_launch_opt_value(int argc, char **argv, int *i,
                                       const char *inl)
{
    if (inl)
        return inl;
    if (*i + 1 >= argc) {
        fy_launch_msg("option '%s' needs a value (try --help)", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

static int fy_launch_env_add(struct fy_launch_opts *o, const char *name,
                             const char *value)
{
    if (!name[0] || strchr(name, '=')) {
        fy_launch_msg("invalid environment variable name '%s'", name);
        return -EINVAL;
    }
    size_t len = strlen(name) + strlen(value) + 2;
    char *kv = malloc(len);
    char **nv =
        realloc(o->extra_env, (size_t)(o->n_extra_env + 1) * sizeof(*nv));
    if (!kv || !nv) {
        free(kv);
        if (nv)
            o->extra_env = nv;
        fy_launch_msg("out of memory");
        return -ENOMEM;
    }
    snprintf(kv, len, "%s=%s", name, value);
    o->extra_env = nv;
    o->extra_env[o->n_extra_env++] = kv;
    return 0;
}

static int fy_launch_timeout_parse(const char *s, const char *what,
                                   struct fy_launch_opts *o)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 0 || v > 1e9) {
        fy_launch_msg("%s: invalid timeout '%s' (seconds expected)", what, s);
        return -EINVAL;
    }
    o->timeout_s = v;
    o->timeout_text = s;
    return 0;
}

/* Parse the command line into *o. Returns 0 to run the job, 1 when --help
 * or --version was served, or -EINVAL after printing why. */
static int fy_launch_opts_parse(int argc, char **argv, struct fy_launch_opts *o)
{
    bool timeout_set = false;
    o->nranks = 1;
    o->bind = FY_BIND_DEFAULT;

    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *inl, *v;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == '\0')
            break; /* the program: everything after it is its own */
        if (fy_launch_opt_is(a, "n", &inl) || fy_launch_opt_is(a, "np", &inl)) {
            if (!(v = fy_launch_opt_value(argc, argv, &i, inl)))
                return -EINVAL;
            char *end;
            errno = 0;
            long n = strtol(v, &end, 10);
            if (errno == ERANGE ||
                (end != v && !*end && n > FY_LAUNCH_MAX_RANKS)) {
                fy_launch_msg("-n %s: too many ranks (at most %d)", v,
                              FY_LAUNCH_MAX_RANKS);
                return -EINVAL;
            }
            if (errno || end == v || *end || n < 1) {
                fy_launch_msg("-n %s: the number of ranks must be an "
                              "integer >= 1",
                              v);
                return -EINVAL;
            }
            o->nranks = (int)n;
        } else if (fy_launch_opt_is(a, "bind-to", &inl)) {
            if (!(v = fy_launch_opt_value(argc, argv, &i, inl)))
                return -EINVAL;
            if (!strcmp(v, "core") || !strcmp(v, "hwthread") ||
                !strcmp(v, "cpu"))
                o->bind = FY_BIND_CORE;
            else if (!strcmp(v, "none"))
                o->bind = FY_BIND_NONE;
            else {
                fy_launch_msg("--bind-to %s: expected 'core' or 'none'", v);
                return -EINVAL;
            }
        } else if (fy_launch_opt_is(a, "tag-output", NULL) ||
                   fy_launch_opt_is(a, "prepend-rank", NULL) ||
                   fy_launch_opt_is(a, "l", NULL)) {
            o->tag_output = true;
        } else if (fy_launch_opt_is(a, "timeout", &inl)) {
            if (!(v = fy_launch_opt_value(argc, argv, &i, inl)) ||
                fy_launch_timeout_parse(v, "--timeout", o) < 0)
                return -EINVAL;
            timeout_set = true;
        } else if (fy_launch_opt_is(a, "genv", NULL) ||
                   fy_launch_opt_is(a, "env", NULL)) {
            if (i + 2 >= argc) {
                fy_launch_msg("option '%s' needs NAME and VALUE", a);
                return -EINVAL;
            }
            if (fy_launch_env_add(o, argv[i + 1], argv[i + 2]) < 0)
                return -EINVAL;
            i += 2;
        } else if (fy_launch_opt_is(a, "x", NULL)) {
            if (i + 1 >= argc) {
                fy_launch_msg("option '%s' needs NAME[=VALUE]", a);
                return -EINVAL;
            }
            char *nv = argv[++i];
            char *eq = strchr(nv, '=');
            int rc;
            if (eq) {
                *eq = '\0';
                rc = fy_launch_env_add(o, nv, eq + 1);
                *eq = '=';
            } else {
                const char *cur = getenv(nv);
                rc = cur ? fy_launch_env_add(o, nv, cur) : 0;
            }
            if (rc < 0)
                return -EINVAL;
        } else if (fy_launch_opt_is(a, "oversubscribe", NULL) ||
                   fy_launch_opt_is(a, "genvall", NULL) ||
                   fy_launch_opt_is(a, "envall", NULL)) {
            /* Accepted for scripts written for MPICH/Open MPI: these are
             * what we do anyway. */
        } else if (fy_launch_opt_is(a, "help", NULL) ||
                   fy_launch_opt_is(a, "h", NULL)) {
            fy_launch_usage_print(stdout);
            return 1;
        } else if (fy_launch_opt_is(a, "version", NULL) ||
                   fy_launch_opt_is(a, "V", NULL)) {
            printf("%s (Ferry) %s\n", fy_launch_name, FERRY_VERSION_STRING);
            return 1;
        } else {
            fy_launch_msg("unknown option '%s' (try --help)", a);
            return -EINVAL;
        }
    }
    if (i >= argc) {
        fy_launch_msg("no program to run (try --help)");
        return -EINVAL;
    }
    o->argv = argv + i;

    if (!timeout_set) {
        const char *t = getenv("MPIEXEC_TIMEOUT");
        if (t && *t && fy_launch_timeout_parse(t, "MPIEXEC_TIMEOUT", o) < 0)
            return -EINVAL;
    }
    return 0;
}

/* ---- program, CPUs, identity ------------------------------------------- */

/* Is path an executable regular file? 0, -ENOENT or -EACCES. */
static int fy_launch_prog_check(const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return errno == EACCES ? -EACCES : -ENOENT;
    if (!S_ISREG(st.st_mode) || access(path, X_OK) < 0)
        return -EACCES;
    return 0;
}

/* Resolve 'name' the way execvp() would, before any rank exists, so a typo
 * fails the whole job with one message instead of N. *path_out is malloc'd. */
static int fy_launch_prog_resolve(const char *name, char **path_out)
{
    if (strchr(name, '/')) {
        int rc = fy_launch_prog_check(name);
        if (rc < 0)
            return rc;
        *path_out = strdup(name);
        return *path_out ? 0 : -ENOMEM;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    int best = -ENOENT;
    size_t nlen = strlen(name);
    for (const char *p = path;;) {
        const char *colon = strchrnul(p, ':');
        size_t dlen = (size_t)(colon - p);
        char *cand = malloc(dlen + nlen + 3);
        if (!cand)
            return -ENOMEM;
        if (dlen == 0) /* an empty PATH entry means the current directory */
            snprintf(cand, nlen + 3, "./%s", name);
        else
            snprintf(cand, dlen + nlen + 2, "%.*s/%s", (int)dlen, p, name);
        int rc = fy_launch_prog_check(cand);
        if (rc == 0) {
            *path_out = cand;
            return 0;
        }
        free(cand);
        if (rc == -EACCES)
            best = -EACCES; /* found but unusable: keep looking, like execvp */
        if (!*colon)
            break;
        p = colon + 1;
    }
    return best;
}

/* The CPUs this process may run on, in ascending order. */
static int fy_launch_cpus_get(struct fy_launch_job *job)
{
    for (int ncpu = 1024; ncpu <= (1 << 20); ncpu *= 2) {
        size_t size = CPU_ALLOC_SIZE(ncpu);
        cpu_set_t *set = CPU_ALLOC(ncpu);
        if (!set)
            return -ENOMEM;
        CPU_ZERO_S(size, set);
        if (sched_getaffinity(0, size, set) < 0) {
            int err = errno;
            CPU_FREE(set);
            if (err == EINVAL)
                continue; /* the kernel's mask is wider: grow */
            return -err;
        }
        int n = CPU_COUNT_S(size, set);
        job->cpus = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
        if (!job->cpus) {
            CPU_FREE(set);
            return -ENOMEM;
        }
        job->ncpus = 0;
        for (int c = 0; c < ncpu && job->ncpus < n; c++)
            if (CPU_ISSET_S(c, size, set))
                job->cpus[job->ncpus++] = c;
        job->cpuset = set; /* reused as the children's scratch set */
        job->cpuset_size = size;
        return job->ncpus > 0 ? 0 : -ENODEV;
    }
    return -EINVAL;
}

/* 16 random bytes as hex: unguessable, so other users cannot predict names
 * derived from it. */
static void fy_launch_jobid_make(char out[33])
{
    unsigned char b[16];
    size_t got = 0;
    while (got < sizeof(b)) {
        ssize_t r = getrandom(b + got, sizeof(b) - got, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        got += (size_t)r;
    }
    if (got < sizeof(b)) {
        int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            ssize_t r = read(fd, b, sizeof(b));
            got = r > 0 ? (size_t)r : 0;
            close(fd);
        }
    }
    if (got < sizeof(b)) { /* no entropy source at all: still unique */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
                     ((uint64_t)getpid() << 40);
        for (size_t k = 0; k < sizeof(b); k++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            b[k] = (unsigned char)(x >> 56);
        }
    }
    for (size_t k = 0; k < sizeof(b); k++)
        snprintf(out + 2 * k, 3, "%02x", b[k]);
}

static bool fy_launch_env_name_eq(const char *kv, const char *name)
{
    size_t n = strlen(name);
    return strncmp(kv, name, n) == 0 && kv[n] == '=';
}

static bool fy_launch_env_is_contract(const char *kv)
{
    size_t n =
        sizeof(fy_launch_contract_vars) / sizeof(*fy_launch_contract_vars);
    for (size_t c = 0; c < n; c++)
        if (fy_launch_env_name_eq(kv, fy_launch_contract_vars[c]))
            return true;
    return false;
}

/* FERRY_NODES' block mapping (the same formula as fy_boot_block_node in
 * src/boot/boot.h): rank r's virtual node. */
static int fy_launch_block_node(int rank, int size, int nodes)
{
    int base = size / nodes, extra = size % nodes;
    int big = extra * (base + 1);
    return rank < big ? rank / (base + 1) : extra + (rank - big) / base;
}

/* FERRY_NODES as the ranks will see it (-genv/-x last, else ours): how
 * many virtual nodes, each with its own segment. 0 or -EINVAL (told). */
static int fy_launch_nodes_parse(struct fy_launch_job *job)
{
    const char *v = getenv("FERRY_NODES");
    for (int x = 0; x < job->opts.n_extra_env; x++)
        if (!strncmp(job->opts.extra_env[x], "FERRY_NODES=", 12))
            v = job->opts.extra_env[x] + 12;
    job->nodes = 1;
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (end == v || *end || errno || n < 1 || n > job->opts.nranks) {
        fy_launch_msg("FERRY_NODES='%s' must be an integer from 1 to the "
                      "number of ranks (%d)",
                      v, job->opts.nranks);
        return -EINVAL;
    }
    job->nodes = (int)n;
    return 0;
}

/* The environment every rank gets: ours minus the contract variables and
 * anything -genv overrides, then -genv, then the contract. The FERRY_RANK
 * entry points at 'rank_slot', rewritten before each fork. */
static char **fy_launch_env_build(const struct fy_launch_job *job,
                                  const char *jobid, char *rank_slot)
{
    extern char **environ;
    size_t n = 0;
    while (environ[n])
        n++;
    char **envp = calloc(n + (size_t)job->opts.n_extra_env + 8, sizeof(*envp));
    if (!envp)
        return NULL;
    size_t k = 0;
    for (size_t e = 0; e < n; e++) {
        bool skip = fy_launch_env_is_contract(environ[e]);
        for (int x = 0; x < job->opts.n_extra_env && !skip; x++) {
            const char *xe = job->opts.extra_env[x];
            size_t nl = (size_t)(strchr(xe, '=') - xe);
            skip = strncmp(environ[e], xe, nl + 1) == 0;
        }
        if (!skip)
            envp[k++] = environ[e];
    }
    for (int x = 0; x < job->opts.n_extra_env; x++)
        if (!fy_launch_env_is_contract(job->opts.extra_env[x]))
            envp[k++] = job->opts.extra_env[x];
    char buf[128];
    snprintf(buf, sizeof(buf), "FERRY_SIZE=%d", job->opts.nranks);
    envp[k++] = strdup(buf);
    snprintf(buf, sizeof(buf), "FERRY_JOBID=%s", jobid);
    envp[k++] = strdup(buf);
    snprintf(buf, sizeof(buf), "FERRY_NCPUS=%d", job->ncpus);
    envp[k++] = strdup(buf);
    envp[k++] = (char *)job->shm_slot; /* rewritten before each fork */
    snprintf(buf, sizeof(buf), "FERRY_KVS_FD=%d", job->kvsfd);
    envp[k++] = strdup(buf);
    envp[k++] = rank_slot;
    envp[k] = NULL;
    for (size_t c = k - 6; c < k - 1; c++)
        if (!envp[c]) {
            free(envp);
            return NULL;
        }
    return envp;
}

/* ---- the job ------------------------------------------------------------ */

/* Send sig to every rank, once: to their process group, which also reaches
 * the processes ranks started themselves, and by pid to a rank that left the
 * group. Only while some rank is unreaped: then the group surely still
 * exists (a zombie keeps it), so its id cannot have been reused. */
static void fy_launch_job_signal(struct fy_launch_job *job, int sig)
{
    if (job->nrunning == 0)
        return;
    if (job->pgid > 0)
        (void)kill(-job->pgid, sig);
    for (int i = 0; i < job->opts.nranks; i++)
        if (job->ranks[i].running && getpgid(job->ranks[i].pid) != job->pgid)
            (void)kill(job->ranks[i].pid, sig);
}

/* Begin tearing the job down: SIGTERM now, SIGKILL after the grace. */
static void fy_launch_job_terminate(struct fy_launch_job *job)
{
    if (job->killing)
        return;
    job->killing = true;
    job->kill_deadline = fy_launch_now() + FY_LAUNCH_KILL_GRACE_S;
    fy_launch_job_signal(job, SIGTERM);
    fy_launch_job_signal(job, SIGCONT); /* a stopped rank must see SIGTERM */
}

static void fy_launch_job_kill_hard(struct fy_launch_job *job)
{
    job->killing = true;
    job->killed_hard = true;
    fy_launch_job_signal(job, SIGKILL);
}

/* Record the job's first failure: its status becomes ours. */
static void fy_launch_job_fail(struct fy_launch_job *job, int status)
{
    if (job->failed)
        return;
    job->failed = true;
    job->exit_status = status;
}

/* Everything after fork() in the child. Single-threaded parent, so the usual
 * fork-in-threads restrictions do not bite, but keep to system calls. */
static _Noreturn void fy_launch_child_run(struct fy_launch_job *job, int rank,
                                          char **envp, int relay_rd, int out_wr,
                                          int err_wr)
{
    /* Own process group: the terminal's SIGINT reaches only us (we forward
     * it once), and the whole job can be signalled in one call. */
    (void)setpgid(0, job->pgid);

    /* kill -9 of the launcher must take the rank down; the check closes the
     * race where the launcher died before prctl() took effect. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != job->self)
        _exit(FY_LAUNCH_EXIT_SYSTEM);

    int in = rank == 0 ? relay_rd : job->devnull;
    if (in >= 0 && dup2(in, STDIN_FILENO) < 0)
        goto fail;
    if (out_wr >= 0 &&
        (dup2(out_wr, STDOUT_FILENO) < 0 || dup2(err_wr, STDERR_FILENO) < 0))
        goto fail;
    /* The one shared segment crosses exec; every other fd of ours is
     * O_CLOEXEC. */
    if (fcntl(job->shmfd, F_SETFD, 0) < 0 || fcntl(job->kvsfd, F_SETFD, 0) < 0)
        goto fail;

    if (job->bind) {
        int cpu = job->cpus[rank % job->ncpus];
        CPU_ZERO_S(job->cpuset_size, job->cpuset);
        CPU_SET_S(cpu, job->cpuset_size, job->cpuset);
        if (sched_setaffinity(0, job->cpuset_size, job->cpuset) < 0) {
            char m[128];
            int n =
                snprintf(m, sizeof(m),
                         "%s: warning: rank %d: cannot bind to cpu %d: %s\n",
                         fy_launch_name, rank, cpu, strerror(errno));
            if (n > 0)
                (void)fy_launch_fd_write_all(STDERR_FILENO, m, (size_t)n);
        }
    }

    /* Undo what the launcher changed for itself, so the rank starts as if
     * run directly: signal mask, SIGPIPE, the open-file limit. */
    (void)setrlimit(RLIMIT_NOFILE, &job->nofile);
    (void)signal(SIGPIPE, job->sigpipe_orig);
    sigset_t none;
    sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, NULL);

    char **argv = job->opts.argv;
    execve(job->prog_path, argv, envp);
    if (errno == ENOEXEC) { /* a script without #!: run it with sh, as execvp */
        int argc = 0;
        while (argv[argc])
            argc++;
        char **sh = calloc((size_t)argc + 2, sizeof(*sh));
        if (sh) {
            sh[0] = (char *)"sh";
            sh[1] = job->prog_path;
            for (int a = 1; a < argc; a++)
                sh[a + 1] = argv[a];
            execve("/bin/sh", sh, envp);
        }
    }
fail:;
    int msg[2] = {rank, errno};
    (void)!write(job->errpipe[1], msg, sizeof(msg));
    _exit(msg[1] == ENOENT ? FY_LAUNCH_EXIT_NOTFOUND : FY_LAUNCH_EXIT_NOEXEC);
}

/* Fork rank 'rank'. Returns 0 or a negative errno (nothing was started). */
static int fy_launch_rank_spawn(struct fy_launch_job *job, int rank,
                                char **envp, int relay_rd)
{
    struct fy_launch_rank *r = &job->ranks[rank];
    int outp[2] = {-1, -1}, errp[2] = {-1, -1};
    if (job->opts.tag_output) {
        if (pipe2(outp, O_CLOEXEC) < 0)
            return -errno;
        if (pipe2(errp, O_CLOEXEC) < 0) {
            int err = errno;
            close(outp[0]);
            close(outp[1]);
            return -err;
        }
    }
    pid_t pid = fork();
    if (pid < 0) {
        int err = errno;
        if (outp[0] >= 0) {
            close(outp[0]);
            close(outp[1]);
            close(errp[0]);
            close(errp[1]);
        }
        return -err;
    }
    if (pid == 0)
        fy_launch_child_run(job, rank, envp, relay_rd, outp[1], errp[1]);

    if (job->pgid == 0)
        job->pgid = pid;
    /* Also from this side, so a signal sent to the group right after fork
     * cannot miss a child that has not run setpgid() yet. */
    (void)setpgid(pid, job->pgid);
    r->pid = pid;
    r->running = true;
    job->nrunning++;
    r->out[0].fd = outp[0];
    r->out[1].fd = errp[0];
    if (outp[0] >= 0) {
        close(outp[1]);
        close(errp[1]);
        (void)fcntl(outp[0], F_SETFL, O_NONBLOCK);
        (void)fcntl(errp[0], F_SETFL, O_NONBLOCK);
    }
    return 0;
}

/* ---- tagged output ------------------------------------------------------ */

static void fy_launch_stream_close(struct fy_launch_stream *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    free(s->buf);
    s->buf = NULL;
    s->len = s->cap = 0;
}

/* Our stdout (k=0) or stderr (k=1) is gone: stop relaying that stream, and
 * close the ranks' pipes so they get EPIPE as they would writing directly. */
static void fy_launch_sink_break(struct fy_launch_job *job, int k)
{
    job->sink_broken[k] = true;
    for (int i = 0; i < job->opts.nranks; i++)
        fy_launch_stream_close(&job->ranks[i].out[k]);
}

/* Write every complete line in s->buf, each prefixed "[rank] ", with one
 * write() call so no other rank's bytes come between. With 'final', also the
 * incomplete rest, ended with a newline. */
static void fy_launch_stream_emit(struct fy_launch_job *job, int rank, int k,
                                  bool final)
{
    struct fy_launch_stream *s = &job->ranks[rank].out[k];
    size_t end = s->len;
    while (end > 0 && s->buf[end - 1] != '\n')
        end--;
    bool cut = false;
    if ((final || s->len >= FY_LAUNCH_LINE_MAX) && end < s->len) {
        end = s->len;
        cut = true;
    }
    if (end == 0)
        return;
    char prefix[24];
    int plen = snprintf(prefix, sizeof(prefix), "[%d] ", rank);
    size_t nlines = cut ? 1 : 0;
    for (size_t p = 0; p < end; p++)
        nlines += s->buf[p] == '\n';
    char *o = malloc(end + nlines * (size_t)plen + 1);
    if (o) {
        size_t w = 0;
        bool bol = true;
        for (size_t p = 0; p < end; p++) {
            if (bol) {
                memcpy(o + w, prefix, (size_t)plen);
                w += (size_t)plen;
            }
            o[w++] = s->buf[p];
            bol = s->buf[p] == '\n';
        }
        if (cut)
            o[w++] = '\n';
        if (!job->sink_broken[k] &&
            fy_launch_fd_write_all(k == 0 ? STDOUT_FILENO : STDERR_FILENO, o,
                                   w) == -EPIPE) {
            free(o);
            fy_launch_sink_break(job, k);
            return;
        }
        free(o);
    }
    memmove(s->buf, s->buf + end, s->len - end);
    s->len -= end;
}

/* Read what the rank wrote on stream k. 'drain': the rank is gone, read
 * until empty (bounded, a grandchild may still write) and close. */
static void fy_launch_stream_read(struct fy_launch_job *job, int rank, int k,
                                  bool drain)
{
    struct fy_launch_stream *s = &job->ranks[rank].out[k];
    for (int iter = 0; s->fd >= 0 && iter < (drain ? 256 : 1); iter++) {
        if (s->cap - s->len < 65536) {
            size_t ncap = s->cap ? s->cap * 2 : 65536 * 2;
            char *nb = realloc(s->buf, ncap);
            if (!nb)
                break;
            s->buf = nb;
            s->cap = ncap;
        }
        ssize_t n = read(s->fd, s->buf + s->len, s->cap - s->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            break;
        if (n <= 0) {
            fy_launch_stream_emit(job, rank, k, true);
            fy_launch_stream_close(s);
            return;
        }
        s->len += (size_t)n;
        fy_launch_stream_emit(job, rank, k, false);
    }
    if (drain && s->fd >= 0) {
        fy_launch_stream_emit(job, rank, k, true);
        fy_launch_stream_close(s);
    }
}

/* ---- stdin relay -------------------------------------------------------- */

static void fy_launch_relay_close(struct fy_launch_job *job)
{
    if (job->relay_fd >= 0)
        close(job->relay_fd);
    job->relay_fd = -1;
    job->relay_eof = true;
    job->relay_len = 0;
}

/* May we read the terminal now? Only as its foreground job: a background
 * read would stop us with SIGTTIN (or fail with EIO, SIGTTIN being blocked). */
static bool fy_launch_relay_can_read(const struct fy_launch_job *job)
{
    return job->relay && !job->relay_eof && job->relay_fd >= 0 &&
           job->relay_len == 0 && tcgetpgrp(STDIN_FILENO) == getpgrp();
}

static void fy_launch_relay_in(struct fy_launch_job *job)
{
    ssize_t n = read(STDIN_FILENO, job->relay_buf, sizeof(job->relay_buf));
    if (n > 0)
        job->relay_len = (size_t)n;
    else if (n == 0 || (errno != EINTR && errno != EAGAIN && errno != EIO))
        fy_launch_relay_close(job); /* end of input (^D) or a dead terminal */
}

static void fy_launch_relay_out(struct fy_launch_job *job)
{
    ssize_t n = write(job->relay_fd, job->relay_buf, job->relay_len);
    if (n < 0) {
        if (errno != EINTR && errno != EAGAIN)
            fy_launch_relay_close(job); /* rank 0 closed its stdin */
        return;
    }
    memmove(job->relay_buf, job->relay_buf + n, job->relay_len - (size_t)n);
    job->relay_len -= (size_t)n;
}

/* ---- events ------------------------------------------------------------- */

static int fy_launch_rank_of(const struct fy_launch_job *job, pid_t pid)
{
    for (int i = 0; i < job->opts.nranks; i++)
        if (job->ranks[i].pid == pid)
            return i;
    return -1;
}

/* Children that could not exec tell us why; say it once for the job. */
static void fy_launch_errpipe_read(struct fy_launch_job *job)
{
    int msg[2];
    while (job->errpipe[0] >= 0) {
        ssize_t n = read(job->errpipe[0], msg, sizeof(msg));
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0) {
            /* Every child has exec'd or exited: none can report any more. */
            close(job->errpipe[0]);
            job->errpipe[0] = -1;
        }
        if (n != (ssize_t)sizeof(msg)) /* writes of 8 bytes are atomic */
            break;
        if (msg[0] < 0 || msg[0] >= job->opts.nranks)
            continue;
        job->ranks[msg[0]].exec_failed = true;
        if (!job->failed) {
            fy_launch_msg("cannot execute '%s': %s", job->opts.argv[0],
                          strerror(msg[1]));
            fy_launch_job_fail(job, msg[1] == ENOENT ? FY_LAUNCH_EXIT_NOTFOUND
                                                     : FY_LAUNCH_EXIT_NOEXEC);
            fy_launch_job_terminate(job);
        }
    }
}

static void fy_launch_rank_exited(struct fy_launch_job *job, int i, int wstatus)
{
    struct fy_launch_rank *r = &job->ranks[i];
    r->running = false;
    job->nrunning--;
    if (job->opts.tag_output) {
        fy_launch_stream_read(job, i, 0, true);
        fy_launch_stream_read(job, i, 1, true);
    }
    if (i == 0 && job->relay)
        fy_launch_relay_close(job);

    int status;
    if (WIFEXITED(wstatus))
        status = WEXITSTATUS(wstatus);
    else if (WIFSIGNALED(wstatus))
        status = 128 + WTERMSIG(wstatus);
    else
        return;
    /* Exiting 0 while others run is normal (MPI_Finalize done). Deaths we
     * caused while tearing the job down are not failures of their own. */
    if (status == 0 || job->failed || job->killing || r->exec_failed)
        return;

    const char *tail = job->nrunning > 0 ? "; terminating the job" : "";
    if (WIFEXITED(wstatus))
        fy_launch_msg("rank %d (pid %d) exited with status %d%s", i,
                      (int)r->pid, status, tail);
    else
        fy_launch_msg("rank %d (pid %d) killed by signal %d (%s)%s%s", i,
                      (int)r->pid, WTERMSIG(wstatus),
                      strsignal(WTERMSIG(wstatus)),
                      WCOREDUMP(wstatus) ? " (core dumped)" : "", tail);
    fy_launch_job_fail(job, status);
    fy_launch_job_terminate(job);
}

/* How long a rank's failure waits for a killed peer to show (above). */
#define FY_LAUNCH_KILLED_GRACE_MS 100

/* A running rank already dead by a signal (not yet reaped), or -1. */
static int fy_launch_rank_killed(struct fy_launch_job *job)
{
    for (int k = 0; k < job->opts.nranks; k++) {
        siginfo_t si;
        memset(&si, 0, sizeof(si));
        if (job->ranks[k].running &&
            waitid(P_PID, (id_t)job->ranks[k].pid, &si,
                   WEXITED | WNOHANG | WNOWAIT) == 0 &&
            si.si_pid != 0 &&
            (si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED))
            return k;
    }
    return -1;
}

/* Reap every child that has exited. Each is first looked at without being
 * reaped, so the last rank of a job being killed still holds the process
 * group while we SIGKILL whatever the ranks left behind in it. */
static void fy_launch_children_reap(struct fy_launch_job *job)
{
    fy_launch_errpipe_read(job); /* know about exec failures first */
    for (;;) {
        siginfo_t si;
        memset(&si, 0, sizeof(si));
        if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
            si.si_pid == 0)
            return;
        int i = fy_launch_rank_of(job, si.si_pid);
        if (i >= 0 && si.si_code == CLD_EXITED && si.si_status != 0) {
            /* A rank that failed may have done so because another one was
             * killed (it saw its peer vanish): report the killed rank,
             * whose status is the job's, if it is already gone too. A
             * killed process closes its sockets and unmaps its memory
             * before it becomes a zombie, so its peer can see it vanish,
             * fail and exit first: give it FY_LAUNCH_KILLED_GRACE_MS
             * (the first failure of a job only). */
            int k = fy_launch_rank_killed(job);
            for (int w = 0; k < 0 && !job->failed && !job->killing &&
                            job->nrunning > 1 && w < FY_LAUNCH_KILLED_GRACE_MS;
                 w++) {
                usleep(1000);
                k = fy_launch_rank_killed(job);
            }
            if (k >= 0) {
                si.si_pid = job->ranks[k].pid;
                i = k;
            }
        }
        if (i >= 0 && job->ranks[i].running && job->nrunning == 1 &&
            job->killing && job->pgid > 0)
            (void)kill(-job->pgid, SIGKILL);
        int wstatus;
        if (waitpid(si.si_pid, &wstatus, 0) < 0)
            return;
        if (i >= 0 && job->ranks[i].running)
            fy_launch_rank_exited(job, i, wstatus);
        /* else: a child we inherited from whoever exec'd us; just reap it */
    }
}

static void fy_launch_signal_handle(struct fy_launch_job *job, int sig)
{
    switch (sig) {
    case SIGCHLD:
        fy_launch_children_reap(job);
        break;
    case SIGINT:
    case SIGTERM:
    case SIGHUP:
    case SIGQUIT:
        if (job->user_signals++ == 0 || job->killed_hard) {
            fy_launch_job_signal(job, sig);
            break;
        }
        /* Asked twice: the ranks ignore or are slow to honour it. */
        fy_launch_msg("received signal %d (%s) after forwarding one; "
                      "killing the job",
                      sig, strsignal(sig));
        fy_launch_job_fail(job, 128 + sig);
        fy_launch_job_kill_hard(job);
        break;
    case SIGUSR1:
    case SIGUSR2:
        fy_launch_job_signal(job, sig);
        break;
    case SIGTSTP:
        /* ^Z reached only us (the ranks are in their own group): stop them,
         * then ourselves, and wake them when we are continued. */
        fy_launch_job_signal(job, SIGSTOP);
        (void)raise(SIGSTOP);
        fy_launch_job_signal(job, SIGCONT);
        break;
    case SIGCONT:
        fy_launch_job_signal(job, SIGCONT);
        break;
    default: /* SIGTTIN/SIGTTOU: blocked so terminal I/O fails instead */
        break;
    }
}

static void fy_launch_signals_read(struct fy_launch_job *job)
{
    struct signalfd_siginfo si[16];
    ssize_t n;
    while ((n = read(job->sigfd, si, sizeof(si))) > 0)
        for (size_t k = 0; k < (size_t)n / sizeof(si[0]); k++)
            fy_launch_signal_handle(job, (int)si[k].ssi_signo);
}

enum { FY_PFD_SIG, FY_PFD_ERR, FY_PFD_STDIN, FY_PFD_RELAY, FY_PFD_STREAMS };

/* Wait for events until every rank is reaped. Sleeps in poll(): ~0 CPU. */
static void fy_launch_job_wait(struct fy_launch_job *job)
{
    int nr = job->opts.nranks;
    size_t cap = FY_PFD_STREAMS + 2 * (size_t)nr;
    struct pollfd *pfd = calloc(cap, sizeof(*pfd));
    int *who = calloc(cap, sizeof(*who)); /* rank*2 + stream for streams */
    if (!pfd || !who) {
        fy_launch_msg("out of memory; killing the job");
        fy_launch_job_fail(job, FY_LAUNCH_EXIT_SYSTEM);
        fy_launch_job_kill_hard(job);
        while (job->nrunning > 0) { /* reap without poll */
            int st;
            pid_t p = waitpid(-1, &st, 0);
            if (p < 0)
                break;
            int i = fy_launch_rank_of(job, p);
            if (i >= 0 && job->ranks[i].running) {
                job->ranks[i].running = false;
                job->nrunning--;
            }
        }
        free(pfd);
        free(who);
        return;
    }

    while (job->nrunning > 0) {
        for (size_t k = 0; k < FY_PFD_STREAMS; k++)
            pfd[k] = (struct pollfd){.fd = -1};
        pfd[FY_PFD_SIG] = (struct pollfd){.fd = job->sigfd, .events = POLLIN};
        pfd[FY_PFD_ERR] =
            (struct pollfd){.fd = job->errpipe[0], .events = POLLIN};
        bool can_read = fy_launch_relay_can_read(job);
        if (can_read)
            pfd[FY_PFD_STDIN] =
                (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
        if (job->relay_fd >= 0 && job->relay_len > 0)
            pfd[FY_PFD_RELAY] =
                (struct pollfd){.fd = job->relay_fd, .events = POLLOUT};
        size_t np = FY_PFD_STREAMS;
        if (job->opts.tag_output)
            for (int i = 0; i < nr; i++)
                for (int k = 0; k < 2; k++)
                    if (job->ranks[i].out[k].fd >= 0) {
                        pfd[np] = (struct pollfd){.fd = job->ranks[i].out[k].fd,
                                                  .events = POLLIN};
                        who[np++] = i * 2 + k;
                    }

        double now = fy_launch_now(), wake = -1;
        if (job->killing && !job->killed_hard)
            wake = job->kill_deadline;
        if (job->timeout_deadline > 0 && !job->failed &&
            (wake < 0 || job->timeout_deadline < wake))
            wake = job->timeout_deadline;
        int timeout = -1;
        if (wake >= 0)
            timeout = wake <= now ? 0 : (int)ceil((wake - now) * 1000.0);
        if (job->relay && !can_read && !job->relay_eof && job->relay_len == 0 &&
            (timeout < 0 || timeout > FY_LAUNCH_FG_RECHECK_MS))
            timeout = FY_LAUNCH_FG_RECHECK_MS;

        int n = poll(pfd, (nfds_t)np, timeout);
        if (n < 0 && errno != EINTR) {
            fy_launch_msg("poll: %s; killing the job", strerror(errno));
            fy_launch_job_fail(job, FY_LAUNCH_EXIT_SYSTEM);
            fy_launch_job_kill_hard(job);
            /* fall through to the signalfd read below, blocking on SIGCHLD */
            struct pollfd one = {.fd = job->sigfd, .events = POLLIN};
            (void)poll(&one, 1, 100);
            n = 0;
        }

        /* Output first, so a rank's last lines come before our message
         * about its death. */
        for (size_t p = FY_PFD_STREAMS; n > 0 && p < np; p++)
            if (pfd[p].revents)
                fy_launch_stream_read(job, who[p] / 2, who[p] % 2, false);
        if (pfd[FY_PFD_ERR].revents)
            fy_launch_errpipe_read(job);
        if (pfd[FY_PFD_STDIN].revents)
            fy_launch_relay_in(job);
        if (pfd[FY_PFD_RELAY].revents & POLLOUT)
            fy_launch_relay_out(job);
        else if (pfd[FY_PFD_RELAY].revents & (POLLERR | POLLHUP))
            fy_launch_relay_close(job);
        if (job->relay_eof && job->relay_fd >= 0 && job->relay_len == 0)
            fy_launch_relay_close(job);
        fy_launch_signals_read(job);

        now = fy_launch_now();
        if (job->timeout_deadline > 0 && !job->failed &&
            now >= job->timeout_deadline && job->nrunning > 0) {
            fy_launch_msg("job timed out after %s s", job->opts.timeout_text);
            fy_launch_job_fail(job, FY_LAUNCH_EXIT_TIMEOUT);
            fy_launch_job_terminate(job);
        }
        if (job->killing && !job->killed_hard && now >= job->kill_deadline)
            fy_launch_job_kill_hard(job);
    }
    free(pfd);
    free(who);
}

/* ---- main --------------------------------------------------------------- */

/* With fd 0, 1 or 2 closed, our memfd or pipes could land on them and the
 * ranks would write into the wrong file. */
static void fy_launch_stdio_ensure(void)
{
    for (int fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            int nfd = open("/dev/null", O_RDWR);
            if (nfd >= 0 && nfd != fd) {
                (void)dup2(nfd, fd);
                close(nfd);
            }
        }
}

int main(int argc, char **argv)
{
    static struct fy_launch_job job_storage;
    struct fy_launch_job *job = &job_storage;
    job->nodes = 1;
    job->shmfd = job->kvsfd = job->sigfd = job->devnull = job->relay_fd = -1;
    job->errpipe[0] = job->errpipe[1] = -1;

    const char *base = strrchr(argv[0], '/');
    base = base ? base + 1 : argv[0];
    if (strcmp(base, "mpirun") == 0)
        fy_launch_name = "mpirun";
    fy_launch_stdio_ensure();

    int rc = fy_launch_opts_parse(argc, argv, &job->opts);
    if (rc == 1)
        return fflush(stdout) == 0 ? 0 : FY_LAUNCH_EXIT_SYSTEM;
    if (rc < 0)
        return FY_LAUNCH_EXIT_USAGE;
    int nr = job->opts.nranks;

    rc = fy_launch_prog_resolve(job->opts.argv[0], &job->prog_path);
    if (rc < 0) {
        fy_launch_msg("cannot execute '%s': %s", job->opts.argv[0],
                      strerror(-rc));
        return rc == -ENOENT ? FY_LAUNCH_EXIT_NOTFOUND : FY_LAUNCH_EXIT_NOEXEC;
    }

    rc = fy_launch_cpus_get(job);
    if (rc < 0) {
        fy_launch_msg("sched_getaffinity: %s", strerror(-rc));
        return FY_LAUNCH_EXIT_SYSTEM;
    }
    switch (job->opts.bind) {
    case FY_BIND_NONE:
        job->bind = false;
        break;
    case FY_BIND_CORE:
        job->bind = true;
        if (nr > job->ncpus)
            fy_launch_msg("warning: %d ranks on %d cpus: binding wraps around, "
                          "ranks will share cpus",
                          nr, job->ncpus);
        break;
    case FY_BIND_DEFAULT:
        job->bind = nr <= job->ncpus;
        break;
    }

    char jobid[33];
    fy_launch_jobid_make(jobid);
    char memname[64];
    snprintf(memname, sizeof(memname), "ferry-%s", jobid);
    /* One anonymous segment for the whole job, inherited by the ranks: it has
     * no name in /dev/shm, so no kill -9 of anything can leak it. Sealing is
     * allowed so the library may forbid shrinking once it has sized it. */
    rc = fy_launch_nodes_parse(job);
    if (rc < 0)
        return FY_LAUNCH_EXIT_USAGE;
    job->shmfds = calloc((size_t)job->nodes, sizeof(*job->shmfds));
    if (!job->shmfds) {
        fy_launch_msg("out of memory");
        return FY_LAUNCH_EXIT_SYSTEM;
    }
    for (int n = 0; n < job->nodes; n++)
        job->shmfds[n] = -1;
    for (int n = 0; n < job->nodes; n++) {
        job->shmfds[n] = memfd_create(memname, MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (job->shmfds[n] < 0) {
            fy_launch_msg("memfd_create: %s", strerror(errno));
            return FY_LAUNCH_EXIT_SYSTEM;
        }
    }
    job->shmfd = job->shmfds[0];
    snprintf(job->shm_slot, sizeof(job->shm_slot), "FERRY_SHM_FD=%d",
             job->shmfd);
    /* The bootstrap's key-value table (src/boot/kvs.c): the ranks size it. */
    snprintf(memname, sizeof(memname), "ferry-kvs-%s", jobid);
    job->kvsfd = memfd_create(memname, MFD_CLOEXEC);
    if (job->kvsfd < 0) {
        fy_launch_msg("memfd_create: %s", strerror(errno));
        return FY_LAUNCH_EXIT_SYSTEM;
    }

    job->ranks = calloc((size_t)nr, sizeof(*job->ranks));
    char rank_slot[32] = "FERRY_RANK=0";
    char **envp = fy_launch_env_build(job, jobid, rank_slot);
    if (!job->ranks || !envp) {
        fy_launch_msg("out of memory");
        return FY_LAUNCH_EXIT_SYSTEM;
    }
    for (int i = 0; i < nr; i++)
        job->ranks[i].out[0].fd = job->ranks[i].out[1].fd = -1;

    (void)getrlimit(RLIMIT_NOFILE, &job->nofile);
    if (job->opts.tag_output) {
        /* Two pipes per rank stay open in the launcher. */
        rlim_t need = 2 * (rlim_t)nr + 64;
        if (job->nofile.rlim_cur != RLIM_INFINITY &&
            job->nofile.rlim_cur < need) {
            struct rlimit raised = job->nofile;
            raised.rlim_cur = job->nofile.rlim_max;
            if (raised.rlim_cur != RLIM_INFINITY && raised.rlim_cur > need)
                raised.rlim_cur = need;
            (void)setrlimit(RLIMIT_NOFILE, &raised);
        }
    }

    /* Signals become events on a signalfd. Blocked from here on, so none is
     * lost between fork and the event loop; the children unblock them. */
    sigset_t set;
    sigemptyset(&set);
    static const int sigs[] = {SIGCHLD, SIGINT,  SIGTERM, SIGHUP,
                               SIGQUIT, SIGUSR1, SIGUSR2, SIGTSTP,
                               SIGCONT, SIGTTIN, SIGTTOU};
    for (size_t k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++)
        sigaddset(&set, sigs[k]);
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 ||
        (job->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
        fy_launch_msg("signalfd: %s", strerror(errno));
        return FY_LAUNCH_EXIT_SYSTEM;
    }
    /* A reader of our tagged output going away must not kill us before we
     * have reaped the ranks. */
    job->sigpipe_orig = signal(SIGPIPE, SIG_IGN);
    if (job->sigpipe_orig == SIG_ERR)
        job->sigpipe_orig = SIG_DFL;

    if (pipe2(job->errpipe, O_CLOEXEC) < 0 ||
        fcntl(job->errpipe[0], F_SETFL, O_NONBLOCK) < 0 ||
        (job->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
        fy_launch_msg("cannot set up: %s", strerror(errno));
        return FY_LAUNCH_EXIT_SYSTEM;
    }

    /* stdin goes to rank 0. A file or pipe is simply inherited. A terminal
     * cannot be: rank 0 is not in the terminal's foreground process group,
     * so reading it would stop the rank with SIGTTIN. We relay it instead,
     * reading only while we are the foreground job. (A terminal that is not
     * our controlling one has no job control: it is inherited too.) */
    int relay_rd = -1;
    job->relay = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) >= 0;
    if (job->relay) {
        int rp[2];
        if (pipe2(rp, O_CLOEXEC) < 0) {
            fy_launch_msg("pipe: %s", strerror(errno));
            return FY_LAUNCH_EXIT_SYSTEM;
        }
        relay_rd = rp[0];
        job->relay_fd = rp[1];
        (void)fcntl(job->relay_fd, F_SETFL, O_NONBLOCK);
    }

    job->self = getpid();
    for (int i = 0; i < nr; i++) {
        snprintf(rank_slot, sizeof(rank_slot), "FERRY_RANK=%d", i);
        /* Its node's segment only: the others stay close-on-exec. */
        job->shmfd = job->shmfds[fy_launch_block_node(i, nr, job->nodes)];
        snprintf(job->shm_slot, sizeof(job->shm_slot), "FERRY_SHM_FD=%d",
                 job->shmfd);
        rc = fy_launch_rank_spawn(job, i, envp, relay_rd);
        if (rc < 0) {
            fy_launch_msg("cannot start rank %d: %s%s", i, strerror(-rc),
                          i > 0 ? "; terminating the job" : "");
            fy_launch_job_fail(job, FY_LAUNCH_EXIT_SYSTEM);
            fy_launch_job_terminate(job);
            break;
        }
    }
    /* The ranks hold their copies now; ours would only keep the segment
     * alive after the job. */
    for (int n = 0; n < job->nodes; n++)
        close(job->shmfds[n]);
    free(job->shmfds);
    job->shmfds = NULL;
    job->shmfd = -1;
    close(job->kvsfd);
    job->kvsfd = -1;
    close(job->errpipe[1]);
    job->errpipe[1] = -1;
    if (relay_rd >= 0)
        close(relay_rd);
    if (job->relay && job->ranks[0].pid == 0)
        fy_launch_relay_close(job);

    if (job->opts.timeout_s > 0)
        job->timeout_deadline = fy_launch_now() + job->opts.timeout_s;
    fy_launch_job_wait(job);
    return job->exit_status;
}
