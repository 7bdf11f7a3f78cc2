/* SPDX-License-Identifier: MIT */
/* The tuning file (see tuning.h): a strict line parser that names
 * file:line for every rejected line, the default location, and a writer
 * that replaces the file atomically. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/tuning.h"
#include "util/util.h"

/* A tuning file is a dozen lines; anything this big is not one. */
#define TUNING_FILE_MAX (64 * 1024)

struct parse_ctx {
    const char *name;
    int line;
    char *err;
    size_t errlen;
    /* Line on which each scalar key was set (0: not yet), for duplicate
     * and cross-check messages. */
    int line_eager, line_fastbox, line_cell, line_shmbuf, line_split;
    int line_proto, line_btp, line_btp1, line_rw, line_rw_min;
    int line_coll_cma, line_coll_slice, line_coll_direct;
    int rule_line[FY_TUNING_MAX_RULES];
};

__attribute__((format(printf, 3, 4))) static int
bad(struct parse_ctx *c, int line, const char *fmt, ...)
{
    if (c->err && c->errlen) {
        int n = snprintf(c->err, c->errlen, "%s:%d: ", c->name, line);
        if (n >= 0 && (size_t)n < c->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return -EINVAL;
}

/* A size value: digits first (no sign, no space), then fy_parse_size's
 * k/M/G suffixes. */
static int parse_size_strict(const char *s, uint64_t *out)
{
    long long v;
    if (!isdigit((unsigned char)s[0]) || fy_parse_size(s, &v))
        return -EINVAL;
    *out = (uint64_t)v;
    return 0;
}

static int check_scalar(struct parse_ctx *c, const char *key, int *seen,
                        bool *has, uint64_t *slot, const char *val, uint64_t lo,
                        uint64_t hi, uint64_t multiple)
{
    if (*seen)
        return bad(c, c->line, "duplicate key '%s' (first set on line %d)", key,
                   *seen);
    uint64_t v;
    if (parse_size_strict(val, &v))
        return bad(c, c->line,
                   "%s: '%s' is not a size (bytes, optionally with a k, M "
                   "or G suffix)",
                   key, val);
    if (v < lo || v > hi)
        return bad(c, c->line, "%s = %llu is out of range (%llu to %llu bytes)",
                   key, (unsigned long long)v, (unsigned long long)lo,
                   (unsigned long long)hi);
    if (multiple > 1 && v % multiple)
        return bad(c, c->line, "%s = %llu is not a multiple of %llu", key,
                   (unsigned long long)v, (unsigned long long)multiple);
    *seen = c->line;
    *has = true;
    *slot = v;
    return 0;
}

const char *const fy_tuning_protos[4] = {"auto", "pushpull", "pushzero",
                                         "pushall"};

static int parse_proto(struct parse_ctx *c, struct fy_tuning *t,
                       const char *val)
{
    if (c->line_proto)
        return bad(c, c->line, "duplicate key 'proto' (first set on line %d)",
                   c->line_proto);
    for (size_t i = 0; i < FY_ARRAY_LEN(fy_tuning_protos); i++) {
        if (strcmp(val, fy_tuning_protos[i]))
            continue;
        snprintf(t->proto, sizeof(t->proto), "%s", val);
        t->has_proto = true;
        c->line_proto = c->line;
        return 0;
    }
    return bad(c, c->line,
               "proto: '%s' is not one of auto, pushpull, pushzero, pushall",
               val);
}

static bool valid_mech_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= FY_TUNING_NAME_MAX || !islower((unsigned char)s[0]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) &&
            s[i] != '_' && s[i] != '-')
            return false;
    return true;
}

static int parse_rule(struct parse_ctx *c, struct fy_tuning *t, const char *key,
                      const char *val)
{
    uint64_t min;
    if (parse_size_strict(key + 5, &min))
        return bad(c, c->line,
                   "'%s': expected xfer.<min_bytes>, e.g. xfer.0 or xfer.64K",
                   key);
    if (min > FY_TUNING_XFER_MAX_BYTES)
        return bad(c, c->line, "%s: %llu bytes is beyond the limit (%llu)", key,
                   (unsigned long long)min,
                   (unsigned long long)FY_TUNING_XFER_MAX_BYTES);
    if (!valid_mech_name(val))
        return bad(c, c->line,
                   "%s: '%s' is not a mechanism name (1-%d characters "
                   "a-z, 0-9, '_' or '-', starting with a letter)",
                   key, val, FY_TUNING_NAME_MAX - 1);
    for (int i = 0; i < t->nrules; i++)
        if (t->rules[i].min_bytes == min)
            return bad(c, c->line,
                       "duplicate rule for %llu bytes (first set on line %d)",
                       (unsigned long long)min, c->rule_line[i]);
    if (t->nrules == FY_TUNING_MAX_RULES)
        return bad(c, c->line, "too many xfer rules (at most %d)",
                   FY_TUNING_MAX_RULES);
    /* Insert in order so lookups can scan from the top. */
    int at = t->nrules;
    while (at > 0 && t->rules[at - 1].min_bytes > min) {
        t->rules[at] = t->rules[at - 1];
        c->rule_line[at] = c->rule_line[at - 1];
        at--;
    }
    t->rules[at].min_bytes = min;
    snprintf(t->rules[at].mech, sizeof(t->rules[at].mech), "%s", val);
    c->rule_line[at] = c->line;
    t->nrules++;
    return 0;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        *--e = '\0';
    return s;
}

/* One line, comment already cut off and trimmed, non-empty. */
static int parse_line(struct parse_ctx *c, struct fy_tuning *t, char *s)
{
    char *eq = strchr(s, '=');
    if (!eq)
        return bad(c, c->line, "expected 'key = value', got '%s'", s);
    *eq = '\0';
    char *key = trim(s), *val = trim(eq + 1);
    if (!*key)
        return bad(c, c->line, "missing key before '='");
    for (const char *p = key; *p; p++)
        if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) &&
            *p != '_' && *p != '.' && !(p > key && isupper((unsigned char)*p)))
            return bad(c, c->line, "'%s' is not a valid key", key);
    if (!*val)
        return bad(c, c->line, "missing value for '%s'", key);
    if (strpbrk(val, " \t="))
        return bad(c, c->line, "%s: unexpected text in value '%s'", key, val);

    if (!strcmp(key, "eager_max"))
        return check_scalar(c, key, &c->line_eager, &t->has_eager_max,
                            &t->eager_max, val, 0,
                            FY_TUNING_CELL_MAX - FY_TUNING_CELL_HDR, 1);
    if (!strcmp(key, "fastbox_max"))
        return check_scalar(c, key, &c->line_fastbox, &t->has_fastbox_max,
                            &t->fastbox_max, val, 0, FY_TUNING_FASTBOX_MAX, 1);
    if (!strcmp(key, "cell_size"))
        return check_scalar(c, key, &c->line_cell, &t->has_cell_size,
                            &t->cell_size, val, FY_TUNING_CELL_MIN,
                            FY_TUNING_CELL_MAX, FY_CACHELINE);
    if (!strcmp(key, "shmbuf_size"))
        return check_scalar(c, key, &c->line_shmbuf, &t->has_shmbuf_size,
                            &t->shmbuf_size, val, FY_TUNING_SHMBUF_MIN,
                            FY_TUNING_SHMBUF_MAX, FY_CACHELINE);
    if (!strcmp(key, "split_min"))
        return check_scalar(c, key, &c->line_split, &t->has_split_min,
                            &t->split_min, val, 0, FY_TUNING_XFER_MAX_BYTES, 1);
    if (!strcmp(key, "proto"))
        return parse_proto(c, t, val);
    if (!strcmp(key, "btp"))
        return check_scalar(c, key, &c->line_btp, &t->has_btp, &t->btp, val, 0,
                            FY_TUNING_BTP_MAX, 1);
    if (!strcmp(key, "btp1"))
        return check_scalar(c, key, &c->line_btp1, &t->has_btp1, &t->btp1, val,
                            0, FY_TUNING_BTP_MAX, 1);
    if (!strcmp(key, "recv_write")) {
        if (strcmp(val, "0") && strcmp(val, "1"))
            return bad(c, c->line, "recv_write: '%s' is not 0 or 1", val);
        return check_scalar(c, key, &c->line_rw, &t->has_recv_write,
                            &t->recv_write, val, 0, 1, 1);
    }
    if (!strcmp(key, "coll_cma_min"))
        return check_scalar(c, key, &c->line_coll_cma, &t->has_coll_cma_min,
                            &t->coll_cma_min, val, 0, FY_TUNING_XFER_MAX_BYTES,
                            1);
    if (!strcmp(key, "coll_slice_min"))
        return check_scalar(c, key, &c->line_coll_slice, &t->has_coll_slice_min,
                            &t->coll_slice_min, val, 0,
                            FY_TUNING_XFER_MAX_BYTES, 1);
    if (!strcmp(key, "coll_direct_min"))
        return check_scalar(c, key, &c->line_coll_direct,
                            &t->has_coll_direct_min, &t->coll_direct_min, val,
                            0, FY_TUNING_XFER_MAX_BYTES, 1);
    if (!strcmp(key, "recv_write_min"))
        return check_scalar(c, key, &c->line_rw_min, &t->has_recv_write_min,
                            &t->recv_write_min, val, 0,
                            FY_TUNING_XFER_MAX_BYTES, 1);
    if (!strncmp(key, "xfer.", 5))
        return parse_rule(c, t, key, val);
    return bad(c, c->line,
               "unknown key '%s' (expected eager_max, fastbox_max, "
               "cell_size, shmbuf_size, split_min, xfer.<min_bytes>, proto, "
               "btp, btp1, recv_write, recv_write_min, coll_cma_min, "
               "coll_slice_min or coll_direct_min)",
               key);
}

int fy_tuning_parse(const char *name, const char *text, struct fy_tuning *out,
                    char *err, size_t errlen)
{
    struct parse_ctx c = {
        .name = name ? name : "(tuning)", .err = err, .errlen = errlen};
    struct fy_tuning t;
    memset(&t, 0, sizeof(t));
    char line[FY_TUNING_LINE_MAX + 2];
    const char *p = text;
    while (*p) {
        c.line++;
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n > FY_TUNING_LINE_MAX)
            return bad(&c, c.line, "line longer than %d characters",
                       FY_TUNING_LINE_MAX);
        memcpy(line, p, n);
        line[n] = '\0';
        p += n + (nl ? 1 : 0);
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)line[i] < 0x20 && line[i] != '\t' &&
                line[i] != '\r')
                return bad(&c, c.line, "control character 0x%02x",
                           (unsigned char)line[i]);
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *s = trim(line);
        if (!*s)
            continue;
        int rc = parse_line(&c, &t, s);
        if (rc)
            return rc;
    }
    /* Cross-check: an eager message must fit in one cell. */
    if (t.has_eager_max && t.has_cell_size &&
        t.eager_max > t.cell_size - FY_TUNING_CELL_HDR)
        return bad(&c, c.line_eager,
                   "eager_max = %llu does not fit in one cell (cell_size = "
                   "%llu on line %d leaves %llu payload bytes)",
                   (unsigned long long)t.eager_max,
                   (unsigned long long)t.cell_size, c.line_cell,
                   (unsigned long long)(t.cell_size - FY_TUNING_CELL_HDR));
    /* BTP(1) is a part of BTP. */
    if (t.has_btp && t.has_btp1 && t.btp1 > t.btp)
        return bad(&c, c.line_btp1,
                   "btp1 = %llu is larger than btp = %llu (line %d): the "
                   "first packet is a part of the pushed bytes",
                   (unsigned long long)t.btp1, (unsigned long long)t.btp,
                   c.line_btp);
    *out = t;
    return 0;
}

int fy_tuning_load_msg(const char *path, struct fy_tuning *out, char *err,
                       size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
     * writer forever; it is refused below like any non-regular file. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        int e = errno;
        if (e != ENOENT && err && errlen)
            snprintf(err, errlen, "%s: cannot open: %s", path, strerror(e));
        return -e;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (err && errlen)
            snprintf(err, errlen, "%s: not a regular file", path);
        close(fd);
        return -EINVAL;
    }
    char *buf = malloc(TUNING_FILE_MAX + 1);
    if (!buf) {
        close(fd);
        return -ENOMEM;
    }
    size_t len = 0;
    for (;;) {
        ssize_t n = read(fd, buf + len, TUNING_FILE_MAX + 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            if (err && errlen)
                snprintf(err, errlen, "%s: read: %s", path, strerror(e));
            free(buf);
            close(fd);
            return -e;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (len > TUNING_FILE_MAX) {
            if (err && errlen)
                snprintf(err, errlen,
                         "%s: larger than %d bytes: not a tuning file", path,
                         TUNING_FILE_MAX);
            free(buf);
            close(fd);
            return -EINVAL;
        }
    }
    close(fd);
    buf[len] = '\0';
    int rc;
    if (memchr(buf, '\0', len)) {
        int line = 1;
        for (const char *q = buf; *q; q++)
            line += *q == '\n';
        if (err && errlen)
            snprintf(err, errlen, "%s:%d: NUL byte: not a text file", path,
                     line);
        rc = -EINVAL;
    } else {
        rc = fy_tuning_parse(path, buf, out, err, errlen);
    }
    free(buf);
    return rc;
}

int fy_tuning_load(const char *path, struct fy_tuning *out)
{
    char err[FY_TUNING_LINE_MAX + 256];
    int rc = fy_tuning_load_msg(path, out, err, sizeof(err));
    if (rc && rc != -ENOENT)
        FY_ERROR("tuning file %s", err);
    return rc;
}

int fy_tuning_default_path(char *buf, size_t len)
{
    const char *env = getenv("FERRY_TUNING");
    int n;
    if (env && *env) {
        n = snprintf(buf, len, "%s", env);
    } else {
        const char *xdg = getenv("XDG_CONFIG_HOME");
        const char *home = getenv("HOME");
        /* The XDG spec says a relative XDG_CONFIG_HOME is to be ignored. */
        if (xdg && xdg[0] == '/')
            n = snprintf(buf, len, "%s/ferry/tuning.conf", xdg);
        else if (home && *home)
            n = snprintf(buf, len, "%s/.config/ferry/tuning.conf", home);
        else
            return -ENOENT;
    }
    if (n < 0 || (size_t)n >= len)
        return -ENAMETOOLONG;
    return 0;
}

const struct fy_tuning_rule *fy_tuning_rule_for(const struct fy_tuning *t,
                                                uint64_t n)
{
    for (int i = t->nrules - 1; i >= 0; i--)
        if (t->rules[i].min_bytes <= n)
            return &t->rules[i];
    return NULL;
}

/* mkdir -p of path's parent directory. */
static int make_parents(const char *path)
{
    char dir[PATH_MAX];
    if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
        return -ENAMETOOLONG;
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return -errno;
    return 0;
}

int fy_tuning_save(const char *path, const struct fy_tuning *t,
                   const char *header)
{
    int rc = make_parents(path);
    if (rc)
        return rc;
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
        return -ENAMETOOLONG;
    int fd = mkstemp(tmp);
    if (fd < 0)
        return -errno;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        rc = -errno;
        close(fd);
        unlink(tmp);
        return rc;
    }
    for (const char *h = header; h && *h;) {
        const char *nl = strchr(h, '\n');
        int n = nl ? (int)(nl - h) : (int)strlen(h);
        fprintf(f, "#%s%.*s\n", n ? " " : "", n, h);
        h += n + (nl ? 1 : 0);
    }
    if (t->has_eager_max)
        fprintf(f, "eager_max = %llu\n", (unsigned long long)t->eager_max);
    if (t->has_fastbox_max)
        fprintf(f, "fastbox_max = %llu\n", (unsigned long long)t->fastbox_max);
    if (t->has_cell_size)
        fprintf(f, "cell_size = %llu\n", (unsigned long long)t->cell_size);
    if (t->has_shmbuf_size)
        fprintf(f, "shmbuf_size = %llu\n", (unsigned long long)t->shmbuf_size);
    if (t->has_split_min)
        fprintf(f, "split_min = %llu\n", (unsigned long long)t->split_min);
    if (t->has_proto)
        fprintf(f, "proto = %s\n", t->proto);
    if (t->has_btp)
        fprintf(f, "btp = %llu\n", (unsigned long long)t->btp);
    if (t->has_btp1)
        fprintf(f, "btp1 = %llu\n", (unsigned long long)t->btp1);
    if (t->has_recv_write)
        fprintf(f, "recv_write = %llu\n", (unsigned long long)t->recv_write);
    if (t->has_recv_write_min)
        fprintf(f, "recv_write_min = %llu\n",
                (unsigned long long)t->recv_write_min);
    if (t->has_coll_cma_min)
        fprintf(f, "coll_cma_min = %llu\n",
                (unsigned long long)t->coll_cma_min);
    if (t->has_coll_slice_min)
        fprintf(f, "coll_slice_min = %llu\n",
                (unsigned long long)t->coll_slice_min);
    if (t->has_coll_direct_min)
        fprintf(f, "coll_direct_min = %llu\n",
                (unsigned long long)t->coll_direct_min);
    for (int i = 0; i < t->nrules; i++)
        fprintf(f, "xfer.%llu = %s\n",
                (unsigned long long)t->rules[i].min_bytes, t->rules[i].mech);
    /* A tuning file is configuration, not a secret: readable like a dotfile. */
    fchmod(fd, 0644);
    if (fflush(f) != 0 || fsync(fd) != 0) {
        rc = -errno;
        fclose(f);
        unlink(tmp);
        return rc;
    }
    if (fclose(f) != 0) {
        rc = -errno;
        unlink(tmp);
        return rc;
    }
    if (rename(tmp, path) != 0) {
        rc = -errno;
        unlink(tmp);
        return rc;
    }
    return 0;
}
