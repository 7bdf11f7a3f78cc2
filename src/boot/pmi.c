/* SPDX-License-Identifier: MIT */
/* PMI-1 and PMI-2 wire clients: how MPICH's Hydra (mpiexec.hydra) and
 * Slurm (srun --mpi=pmi2) start Ferry programs as one job. The launcher
 * hands each rank a connected socket (PMI_FD, with PMI_RANK/PMI_SIZE) or
 * an address (PMI_PORT, PMI-1 only); the job's key-value space, fence and
 * process mapping come over it. Also the part every non-Ferry launcher
 * shares: this node's ranks from the mapping and the node's segment, a
 * memfd made by its first local rank and opened by the others through
 * /proc/<pid>/fd (the way src/rma/ windows share theirs).
 *
 * The client is single-threaded and blocking: one request, one reply. Our
 * keys carry the publishing rank ("f<rank>.<key>") since PMI's space is
 * one per job. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boot/boot.h"
#include "util/util.h"

/* Seconds the launcher may take to answer the handshake (a fence may take
 * as long as the slowest rank needs to reach MPI_Init: no limit there). */
#define PMI_HANDSHAKE_SECONDS 60

static struct {
    int fd;
    int version; /* 1 or 2 */
    char kvsname[256];
    int key_max;             /* the launcher's key length limit (PMI-1) */
    bool v2_abort;           /* the PMI-2 server knows cmd=abort (Slurm) */
    char in[FY_PMI_MSG_MAX]; /* bytes read past the last PMI-1 line */
    size_t nin;
} pmi = {.fd = -1};

/* ---- bytes on the wire ---------------------------------------------------
 */

static int write_all(const char *buf, size_t len)
{
    while (len) {
        /* Always a socket (checked): no SIGPIPE if the launcher is gone. */
        ssize_t n = send(pmi.fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int err = n < 0 ? errno : EPIPE;
            if (err == EPIPE || err == ECONNRESET)
                FY_ERROR("the PMI launcher closed its connection (fd %d)",
                         pmi.fd);
            else
                FY_ERROR("cannot write to the PMI launcher (fd %d): %s", pmi.fd,
                         strerror(err));
            return -err;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Read at least one byte into buf; timeout_s 0 waits for ever. */
static ssize_t read_some(char *buf, size_t len, int timeout_s)
{
    if (timeout_s > 0) {
        struct pollfd p = {.fd = pmi.fd, .events = POLLIN};
        int n;
        do
            n = poll(&p, 1, timeout_s * 1000);
        while (n < 0 && errno == EINTR);
        if (n == 0) {
            FY_ERROR("the PMI launcher (fd %d) did not answer within %d s: "
                     "is PMI_FD really a PMI connection?",
                     pmi.fd, timeout_s);
            return -ETIMEDOUT;
        }
    }
    for (;;) {
        ssize_t n = read(pmi.fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == ECONNRESET)
            n = 0; /* a hang-up like any other */
        if (n < 0) {
            int err = errno;
            FY_ERROR("cannot read from the PMI launcher (fd %d): %s", pmi.fd,
                     strerror(err));
            return -err;
        }
        if (n == 0) {
            FY_ERROR("the PMI launcher closed its connection (fd %d)", pmi.fd);
            return -ECONNRESET;
        }
        return n;
    }
}

/* One PMI-1 line, parsed. */
static int recv_v1(struct fy_pmi_msg *m, int timeout_s)
{
    for (;;) {
        char *nl = memchr(pmi.in, '\n', pmi.nin);
        if (nl) {
            size_t len = (size_t)(nl - pmi.in);
            int rc = fy_pmi1_parse(pmi.in, len, m);
            memmove(pmi.in, nl + 1, pmi.nin - len - 1);
            pmi.nin -= len + 1;
            return rc;
        }
        if (pmi.nin == sizeof(pmi.in)) {
            FY_ERROR("PMI-1 reply from the launcher: no newline in %zu bytes",
                     pmi.nin);
            return -EPROTO;
        }
        ssize_t n =
            read_some(pmi.in + pmi.nin, sizeof(pmi.in) - pmi.nin, timeout_s);
        if (n < 0)
            return (int)n;
        pmi.nin += (size_t)n;
    }
}

static int read_exact(char *buf, size_t len, int timeout_s)
{
    /* Bytes a PMI-1 handshake read ahead come first. */
    size_t got = FY_MIN(len, pmi.nin);
    memcpy(buf, pmi.in, got);
    memmove(pmi.in, pmi.in + got, pmi.nin - got);
    pmi.nin -= got;
    while (got < len) {
        ssize_t n = read_some(buf + got, len - got, timeout_s);
        if (n < 0)
            return (int)n;
        got += (size_t)n;
    }
    return 0;
}

/* One PMI-2 frame, parsed. */
static int recv_v2(struct fy_pmi_msg *m, int timeout_s)
{
    char hdr[FY_PMI2_HDR], body[FY_PMI_MSG_MAX];
    size_t len;
    int rc = read_exact(hdr, sizeof(hdr), timeout_s);
    if (rc || (rc = fy_pmi2_frame_len(hdr, &len)) ||
        (rc = read_exact(body, len, timeout_s)))
        return rc;
    return fy_pmi2_parse(body, len, m);
}

static int send_v2(const char *body)
{
    char frame[FY_PMI2_HDR + FY_PMI_MSG_MAX];
    size_t len = strlen(body);
    if (len >= FY_PMI_MSG_MAX)
        return -E2BIG;
    snprintf(frame, sizeof(frame), "%6zu%s", len, body);
    return write_all(frame, FY_PMI2_HDR + len);
}

/* Send 'req' (a PMI-1 line with its newline, or a PMI-2 body) and read the
 * reply into m; it must be 'want' with rc 0 (or no rc). */
static int call(const char *req, const char *want, struct fy_pmi_msg *m,
                int timeout_s)
{
    int rc = pmi.version == 2 ? send_v2(req) : write_all(req, strlen(req));
    if (rc ||
        (rc = pmi.version == 2 ? recv_v2(m, timeout_s) : recv_v1(m, timeout_s)))
        return rc;
    if (strcmp(m->val[0], want)) {
        FY_ERROR("PMI-%d launcher answered cmd=%.40s where Ferry expected "
                 "cmd=%s",
                 pmi.version, m->val[0], want);
        return -EPROTO;
    }
    const char *rcs = fy_pmi_msg_get(m, "rc");
    if (rcs && strcmp(rcs, "0")) {
        const char *msg = fy_pmi_msg_get(m, "msg");
        if (!msg)
            msg = fy_pmi_msg_get(m, "errmsg");
        /* A get's "not found" is an answer, not an error. */
        if (strcmp(want, "get_result") && strcmp(want, "kvs-get-response"))
            FY_ERROR("the PMI-%d launcher refused the request: cmd=%s "
                     "rc=%.20s (%.80s)",
                     pmi.version, want, rcs, msg ? msg : "no message");
        return -EREMOTEIO;
    }
    return 0;
}

/* An integer attribute of m within [lo, hi]. */
static int msg_int(const struct fy_pmi_msg *m, const char *key, long lo,
                   long hi, int *out)
{
    const char *s = fy_pmi_msg_get(m, key);
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || end == s || *end || errno || v < lo || v > hi) {
        FY_ERROR("PMI launcher's cmd=%.40s: %s=%.40s is not an integer in "
                 "[%ld, %ld]",
                 m->val[0], key, s ? s : "(missing)", lo, hi);
        return -EPROTO;
    }
    *out = (int)v;
    return 0;
}

/* Keys and values we send: printable, and nothing either wire uses as a
 * separator. */
static int wire_safe(const char *s, const char *what)
{
    for (const char *p = s; *p; p++)
        if (*p <= ' ' || *p > '~' || *p == '=' || *p == ';') {
            FY_ERROR("key-value exchange: the %s '%.40s' holds a character "
                     "PMI cannot carry (space, '=', ';' or a control "
                     "character)",
                     what, s);
            return -EINVAL;
        }
    return 0;
}

/* ---- environment ---------------------------------------------------------
 */

static int env_int(const char *name, long lo, long hi, int *out)
{
    const char *s = getenv(name);
    if (!s) {
        FY_ERROR("%s is not set: the PMI launcher did not give it", name);
        return -EINVAL;
    }
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi) {
        FY_ERROR("%s='%.40s' is not an integer in [%ld, %ld]", name, s, lo, hi);
        return -EINVAL;
    }
    *out = (int)v;
    return 0;
}

/* Connect to PMI_PORT ("host:port"). */
static int connect_port(const char *hostport)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    if (!colon || colon == hostport ||
        (size_t)(colon - hostport) >= sizeof(host) || !colon[1]) {
        FY_ERROR("PMI_PORT='%.80s' is not host:port", hostport);
        return -EINVAL;
    }
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res, *ai;
    int g = getaddrinfo(host, colon + 1, &hints, &res);
    if (g) {
        FY_ERROR("PMI_PORT='%.80s': %s", hostport, gai_strerror(g));
        return -EHOSTUNREACH;
    }
    int fd = -1, err = ECONNREFUSED;
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                    ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        err = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        FY_ERROR("cannot connect to the PMI launcher at PMI_PORT=%.80s: %s",
                 hostport, strerror(err));
        return -err;
    }
    pmi.fd = fd;
    return 0;
}

/* Take the launcher's descriptor (PMI_FD) or connect to PMI_PORT. */
static int pmi_connect(int version)
{
    const char *port = getenv("PMI_PORT");
    if (getenv("PMI_FD")) {
        int fd;
        int rc = env_int("PMI_FD", 0, INT_MAX, &fd);
        if (rc)
            return rc;
        struct stat st;
        if (fstat(fd, &st) < 0) {
            FY_ERROR("PMI_FD=%d is not an open descriptor (%m): the launcher "
                     "that set it is not connected to this process",
                     fd);
            return -EBADF;
        }
        if (!S_ISSOCK(st.st_mode)) {
            FY_ERROR("PMI_FD=%d is not a socket: not a PMI connection", fd);
            return -ENOTSOCK;
        }
        /* A program the rank execs must not inherit the job's link. */
        fcntl(fd, F_SETFD, FD_CLOEXEC);
        pmi.fd = fd;
        return 0;
    }
    if (port && version == 1)
        return connect_port(port);
    FY_ERROR("PMI-%d: neither PMI_FD nor%s PMI_PORT is set", version,
             version == 2 ? " (PMI-1 only)" : "");
    return -EINVAL;
}

/* ---- PMI-1 ---------------------------------------------------------------
 */

static int v1_init(struct fy_boot *b, char *mapping, size_t maplen)
{
    struct fy_pmi_msg *m = malloc(sizeof(*m));
    if (!m)
        return -ENOMEM;
    int rc, appnum, kmax, vmax, nmax;
    bool port = !getenv("PMI_FD");
    pmi.version = 1;
    if ((rc = pmi_connect(1)))
        goto out_free;
    if (port) {
        /* PMI_PORT: the launcher tells us who we are after initack. */
        int id;
        char req[64];
        if ((rc = env_int("PMI_ID", 0, INT_MAX, &id)))
            goto out_free;
        snprintf(req, sizeof(req), "cmd=initack pmiid=%d\n", id);
        if ((rc = call(req, "initack", m, PMI_HANDSHAKE_SECONDS)))
            goto out_free;
        for (int i = 0; i < 3; i++) {
            if ((rc = recv_v1(m, PMI_HANDSHAKE_SECONDS)))
                goto out_free;
            if (strcmp(m->val[0], "set")) {
                FY_ERROR("PMI-1 launcher sent cmd=%.40s after initack, "
                         "expected cmd=set",
                         m->val[0]);
                rc = -EPROTO;
                goto out_free;
            }
            if (fy_pmi_msg_get(m, "size") &&
                (rc = msg_int(m, "size", 1, 1 << 24, &b->size)))
                goto out_free;
            if (fy_pmi_msg_get(m, "rank") &&
                (rc = msg_int(m, "rank", 0, 1 << 24, &b->rank)))
                goto out_free;
        }
    } else if ((rc = env_int("PMI_SIZE", 1, 1 << 24, &b->size)) ||
               (rc = env_int("PMI_RANK", 0, b->size - 1, &b->rank)))
        goto out_free;
    if (b->rank >= b->size) {
        FY_ERROR("PMI launcher gave rank %d of %d", b->rank, b->size);
        rc = -EPROTO;
        goto out_free;
    }
    fy_log_rank = b->rank;
    if ((rc = call("cmd=init pmi_version=1 pmi_subversion=1\n",
                   "response_to_init", m, PMI_HANDSHAKE_SECONDS)) ||
        (rc = call("cmd=get_maxes\n", "maxes", m, PMI_HANDSHAKE_SECONDS)) ||
        (rc = msg_int(m, "kvsname_max", 1, INT_MAX, &nmax)) ||
        (rc = msg_int(m, "keylen_max", 1, INT_MAX, &kmax)) ||
        (rc = msg_int(m, "vallen_max", 1, INT_MAX, &vmax)))
        goto out_free;
    if (kmax < 16 || vmax < FY_BOOT_VALUE_MAX - 1) {
        FY_ERROR("PMI-1 launcher allows keys of %d and values of %d bytes; "
                 "Ferry needs at least 16 and %d",
                 kmax, vmax, FY_BOOT_VALUE_MAX - 1);
        rc = -ENOTSUP;
        goto out_free;
    }
    pmi.key_max = kmax;
    if ((rc = call("cmd=get_appnum\n", "appnum", m, PMI_HANDSHAKE_SECONDS)) ||
        (rc = msg_int(m, "appnum", -1, INT_MAX, &appnum)) ||
        (rc = call("cmd=get_my_kvsname\n", "my_kvsname", m,
                   PMI_HANDSHAKE_SECONDS)))
        goto out_free;
    const char *kvs = fy_pmi_msg_get(m, "kvsname");
    if (!kvs || !*kvs || strlen(kvs) >= sizeof(pmi.kvsname) ||
        wire_safe(kvs, "job name")) {
        FY_ERROR("PMI-1 launcher gave no usable kvsname");
        rc = -EPROTO;
        goto out_free;
    }
    strcpy(pmi.kvsname, kvs);
    snprintf(b->jobid, sizeof(b->jobid), "%.63s", kvs);
    mapping[0] = '\0';
    if (b->size > 1) {
        char req[400];
        snprintf(req, sizeof(req),
                 "cmd=get kvsname=%s key=PMI_process_mapping\n", pmi.kvsname);
        rc = call(req, "get_result", m, PMI_HANDSHAKE_SECONDS);
        const char *v = fy_pmi_msg_get(m, "value");
        if (rc || !v || strlen(v) >= maplen) {
            FY_ERROR("the PMI-1 launcher gives no PMI_process_mapping; "
                     "Ferry will not guess which ranks share this node");
            rc = rc ? rc : -EPROTO;
            goto out_free;
        }
        strcpy(mapping, v);
    }
    rc = 0;
out_free:
    free(m);
    return rc;
}

/* ---- PMI-2 ---------------------------------------------------------------
 */

static int v2_init(struct fy_boot *b, char *mapping, size_t maplen)
{
    struct fy_pmi_msg *m = malloc(sizeof(*m));
    if (!m)
        return -ENOMEM;
    int rc, pmirank, ver, appnum;
    char req[256];
    pmi.version = 1; /* the init exchange is in PMI-1 lines */
    if ((rc = pmi_connect(2)))
        goto out_free;
    if ((rc = env_int("PMI_RANK", 0, 1 << 24, &pmirank)))
        goto out_free;
    if ((rc = call("cmd=init pmi_version=2 pmi_subversion=0\n",
                   "response_to_init", m, PMI_HANDSHAKE_SECONDS)) ||
        (rc = msg_int(m, "pmi_version", 0, INT_MAX, &ver)))
        goto out_free;
    if (ver != 2) {
        FY_ERROR("the launcher answers PMI version %d to Ferry's PMI-2 "
                 "(FERRY_BOOT=pmi1 may work)",
                 ver);
        rc = -ENOTSUP;
        goto out_free;
    }
    pmi.version = 2;
    /* Hydra 4.0's PMI-2 server rejects cmd=abort (and then ends the job
     * with status 255): there a nonzero exit is the abort, which Hydra
     * turns into the job's end with that status. Slurm knows it. */
    pmi.v2_abort = getenv("SLURM_STEP_ID") != NULL;
    /* Slurm 22.05's stepd takes the abort but, on the test machine, no
     * step cancellation reached slurmctld (SlurmctldDebug=debug2); without
     * srun -K the other ranks would wait for ever. */
    b->abort_ends_node = pmi.v2_abort;
    /* Slurm wants the job id it gave (PMI_JOBID) back in fullinit. */
    const char *pjob = getenv("PMI_JOBID");
    if (pjob && (strlen(pjob) > 64 || wire_safe(pjob, "PMI_JOBID"))) {
        rc = -EINVAL;
        goto out_free;
    }
    if (pjob)
        snprintf(req, sizeof(req),
                 "cmd=fullinit;pmijobid=%s;pmirank=%d;threaded=FALSE;", pjob,
                 pmirank);
    else
        snprintf(req, sizeof(req), "cmd=fullinit;pmirank=%d;threaded=FALSE;",
                 pmirank);
    if ((rc = call(req, "fullinit-response", m, PMI_HANDSHAKE_SECONDS)) ||
        (rc = msg_int(m, "size", 1, 1 << 24, &b->size)) ||
        (rc = msg_int(m, "rank", 0, b->size - 1, &b->rank)))
        goto out_free;
    if (fy_pmi_msg_get(m, "appnum") &&
        (rc = msg_int(m, "appnum", -1, INT_MAX, &appnum)))
        goto out_free;
    fy_log_rank = b->rank;
    if ((rc = call("cmd=job-getid;", "job-getid-response", m,
                   PMI_HANDSHAKE_SECONDS)))
        goto out_free;
    const char *job = fy_pmi_msg_get(m, "jobid");
    if (!job || !*job || strlen(job) >= sizeof(pmi.kvsname) ||
        wire_safe(job, "job id")) {
        FY_ERROR("PMI-2 launcher gave no usable jobid");
        rc = -EPROTO;
        goto out_free;
    }
    strcpy(pmi.kvsname, job);
    snprintf(b->jobid, sizeof(b->jobid), "%.63s", job);
    mapping[0] = '\0';
    if (b->size > 1) {
        rc = call("cmd=info-getjobattr;key=PMI_process_mapping;",
                  "info-getjobattr-response", m, PMI_HANDSHAKE_SECONDS);
        const char *found = fy_pmi_msg_get(m, "found");
        const char *v = fy_pmi_msg_get(m, "value");
        if (rc || !found || strcmp(found, "TRUE") || !v ||
            strlen(v) >= maplen) {
            FY_ERROR("the PMI-2 launcher gives no PMI_process_mapping; "
                     "Ferry will not guess which ranks share this node");
            rc = rc ? rc : -EPROTO;
            goto out_free;
        }
        strcpy(mapping, v);
    }
    rc = 0;
out_free:
    free(m);
    return rc;
}

/* ---- the ops -------------------------------------------------------------
 */

static int pmi_init(struct fy_boot *b, int version)
{
    char mapping[FY_PMI_MSG_MAX];
    int rc = version == 2 ? v2_init(b, mapping, sizeof(mapping))
                          : v1_init(b, mapping, sizeof(mapping));
    if (rc)
        return rc;
    b->ncpus = fy_online_cpus();
    int *node_of = calloc((size_t)b->size, sizeof(*node_of));
    if (!node_of)
        return -ENOMEM;
    if (b->size > 1)
        rc = fy_pmi_parse_mapping(mapping, b->size, node_of);
    if (!rc)
        rc = fy_boot_node_from_map(b, node_of);
    free(node_of);
    if (rc)
        return rc;
    return fy_boot_node_setup(b, version == 2 ? &fy_boot_pmi2_ops
                                              : &fy_boot_pmi1_ops);
}

static int pmi1_init(struct fy_boot *b)
{
    return pmi_init(b, 1);
}

static int pmi2_init(struct fy_boot *b)
{
    return pmi_init(b, 2);
}

static int pmi_key(int rank, const char *key, char *out, size_t len)
{
    if (!*key || strlen(key) >= FY_BOOT_KEY_MAX) {
        FY_ERROR("key-value exchange: key '%.32s' must have 1 to %d bytes", key,
                 FY_BOOT_KEY_MAX - 1);
        return -E2BIG;
    }
    int rc = wire_safe(key, "key");
    if (rc)
        return rc;
    int n = snprintf(out, len, "f%d.%s", rank, key);
    /* PMI-1 launchers say how long a key may be (Hydra: 64, NUL
     * included); PMI-2's limit is 64 too. */
    int max = pmi.key_max ? pmi.key_max : 64;
    if (n < 0 || (size_t)n >= len || n >= max) {
        FY_ERROR("key-value exchange: key '%.32s' is too long for the PMI "
                 "launcher (with the rank it is %d bytes, %d allowed)",
                 key, n, max - 1);
        return -E2BIG;
    }
    return 0;
}

static int pmi_put(const char *key, const char *value)
{
    char k[FY_BOOT_KEY_MAX + 16], req[FY_PMI_MSG_MAX];
    struct fy_pmi_msg *m;
    int rc = pmi_key(fy_boot.rank, key, k, sizeof(k));
    if (rc)
        return rc;
    if (strlen(value) >= FY_BOOT_VALUE_MAX) {
        FY_ERROR("key-value pair '%.32s': the value must have at most %d "
                 "bytes",
                 key, FY_BOOT_VALUE_MAX - 1);
        return -E2BIG;
    }
    if (!*value)
        value = "-"; /* PMI-1 cannot carry an empty value; see pmi_get */
    else if ((rc = wire_safe(value, "value")))
        return rc;
    if (!(m = malloc(sizeof(*m))))
        return -ENOMEM;
    if (pmi.version == 2) {
        snprintf(req, sizeof(req), "cmd=kvs-put;key=%s;value=%s;", k, value);
        rc = call(req, "kvs-put-response", m, 0);
    } else {
        snprintf(req, sizeof(req), "cmd=put kvsname=%s key=%s value=%s\n",
                 pmi.kvsname, k, value);
        rc = call(req, "put_result", m, 0);
    }
    if (rc == -EREMOTEIO)
        FY_ERROR("the PMI launcher refused key '%s'", k);
    free(m);
    return rc;
}

static int pmi_get(int rank, const char *key, char *value_out, size_t len)
{
    char k[FY_BOOT_KEY_MAX + 16], req[FY_PMI_MSG_MAX];
    struct fy_pmi_msg *m;
    if (rank < 0 || rank >= fy_boot.size)
        return -EINVAL;
    int rc = pmi_key(rank, key, k, sizeof(k));
    if (rc)
        return rc;
    if (!(m = malloc(sizeof(*m))))
        return -ENOMEM;
    if (pmi.version == 2) {
        snprintf(req, sizeof(req), "cmd=kvs-get;jobid=%s;srcid=-1;key=%s;",
                 pmi.kvsname, k);
        rc = call(req, "kvs-get-response", m, 0);
        const char *found = fy_pmi_msg_get(m, "found");
        if (!rc && found && strcmp(found, "TRUE"))
            rc = -ENOENT;
    } else {
        snprintf(req, sizeof(req), "cmd=get kvsname=%s key=%s\n", pmi.kvsname,
                 k);
        rc = call(req, "get_result", m, 0);
        const char *found = fy_pmi_msg_get(m, "found");
        if (!rc && found && strcmp(found, "TRUE") && strcmp(found, "true"))
            rc = -ENOENT;
    }
    if (rc == -EREMOTEIO)
        rc = -ENOENT; /* PMI says "not found" with a nonzero rc */
    const char *v = rc ? NULL : fy_pmi_msg_get(m, "value");
    if (!rc && !v)
        rc = -ENOENT;
    if (!rc) {
        if (!strcmp(v, "-"))
            v = "";
        if (strlen(v) >= len)
            rc = -ENOSPC;
        else
            strcpy(value_out, v);
    }
    free(m);
    return rc;
}

static int pmi_fence(void)
{
    struct fy_pmi_msg *m = malloc(sizeof(*m));
    if (!m)
        return -ENOMEM;
    int rc = pmi.version == 2
                 ? call("cmd=kvs-fence;", "kvs-fence-response", m, 0)
                 : call("cmd=barrier_in\n", "barrier_out", m, 0);
    free(m);
    return rc;
}

static void pmi_finalize(void)
{
    if (pmi.fd < 0)
        return;
    struct fy_pmi_msg *m = malloc(sizeof(*m));
    if (m) {
        if (pmi.version == 2)
            call("cmd=finalize;", "finalize-response", m, 0);
        else
            call("cmd=finalize\n", "finalize_ack", m, 0);
        free(m);
    }
    close(pmi.fd);
    pmi.fd = -1;
}

static void pmi_abort(int code, const char *msg)
{
    if (pmi.fd < 0)
        return;
    /* The message travels as one word: replace what the wires cannot
     * carry. No reply: the launcher kills the job (us included). */
    char clean[200], req[400];
    snprintf(clean, sizeof(clean), "%s", msg ? msg : "MPI_Abort");
    for (char *p = clean; *p; p++)
        if (*p <= ' ' || *p > '~' || *p == '=' || *p == ';')
            *p = '_';
    if (pmi.version == 2) {
        if (!pmi.v2_abort)
            return;
        snprintf(req, sizeof(req), "cmd=abort;isworldabort=TRUE;msg=%s;",
                 clean);
        /* Slurm 22.05's stepd receives it; see abort_ends_node. */
        send_v2(req);
    } else {
        snprintf(req, sizeof(req), "cmd=abort exitcode=%d\n", code);
        write_all(req, strlen(req));
    }
}

static bool pmi1_detect(void)
{
    /* Slurm's srun --mpi=pmi2 sets PMI_FD too: its jobs take PMI-2. */
    return (getenv("PMI_FD") || getenv("PMI_PORT")) && !getenv("SLURM_STEP_ID");
}

static bool pmi2_detect(void)
{
    return getenv("PMI_FD") && getenv("SLURM_STEP_ID");
}

const struct fy_boot_ops fy_boot_pmi1_ops = {
    .name = "pmi1",
    .detect = pmi1_detect,
    .init = pmi1_init,
    .kvs_put = pmi_put,
    .kvs_get = pmi_get,
    .fence = pmi_fence,
    .finalize = pmi_finalize,
    .abort = pmi_abort,
};

const struct fy_boot_ops fy_boot_pmi2_ops = {
    .name = "pmi2",
    .detect = pmi2_detect,
    .init = pmi2_init,
    .kvs_put = pmi_put,
    .kvs_get = pmi_get,
    .fence = pmi_fence,
    .finalize = pmi_finalize,
    .abort = pmi_abort,
};

/* ---- this node's ranks and segment (every non-Ferry launcher) ---------- */

int fy_boot_node_from_map(struct fy_boot *b, const int *node_of)
{
    int mine = node_of[b->rank], n = 0, top = 0;
    for (int r = 0; r < b->size; r++) {
        n += node_of[r] == mine;
        top = node_of[r] > top ? node_of[r] : top;
    }
    /* The launcher's node numbers: nodes that run none of our ranks (a
     * gap in the numbering) only make 'nodes' an upper bound. */
    b->node = mine;
    b->nodes = top + 1;
    b->virtual_nodes = false;
    b->local_ranks = malloc((size_t)n * sizeof(*b->local_ranks));
    if (!b->local_ranks)
        return -ENOMEM;
    b->local_size = 0;
    for (int r = 0; r < b->size; r++)
        if (node_of[r] == mine) {
            if (r == b->rank)
                b->local_rank = b->local_size;
            b->local_ranks[b->local_size++] = r;
        }
    return fy_boot_index_local(b);
}

int fy_boot_node_setup(struct fy_boot *b, const struct fy_boot_ops *ops)
{
    char val[64];
    int rc, fd = -1;
    if (b->local_rank == 0) {
        fd = memfd_create("ferry-shm", MFD_CLOEXEC);
        if (fd < 0) {
            int err = errno;
            FY_ERROR("memfd_create for the node's segment failed: %m");
            return -err;
        }
        snprintf(val, sizeof(val), "%d:%d", (int)getpid(), fd);
        if ((rc = ops->kvs_put("shm", val)))
            goto out_close;
    }
    /* Everyone's puts (the segment's address; the network channel's, when
     * there is one) are visible after this. */
    if ((rc = ops->fence()))
        goto out_close;
    if (b->local_rank != 0) {
        int owner = b->local_ranks[0], pid, n, end = 0;
        char path[64];
        if ((rc = ops->kvs_get(owner, "shm", val, sizeof(val)))) {
            FY_ERROR("rank %d (first on this node) published no segment: %s",
                     owner, strerror(-rc));
            goto out_close;
        }
        if (sscanf(val, "%d:%d%n", &pid, &n, &end) != 2 || val[end] ||
            pid <= 0 || n < 0) {
            FY_ERROR("rank %d published segment '%.40s', not pid:fd", owner,
                     val);
            rc = -EPROTO;
            goto out_close;
        }
        snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, n);
        fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            rc = -errno;
            FY_ERROR("cannot open the node's segment %s (made by rank %d): "
                     "%m; are both on this node and allowed to see each "
                     "other's descriptors?",
                     path, owner);
            goto out_close;
        }
    }
    b->shm_fd = fd;
    /* The local rank 0 keeps its memfd open for the job's life, so nothing
     * waits for the others' opens; a memfd leaves nothing in /dev/shm. */
    return 0;
out_close:
    if (fd >= 0)
        close(fd);
    return rc;
}
