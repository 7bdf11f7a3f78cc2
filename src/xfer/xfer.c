/* SPDX-License-Identifier: MIT */
/* The mechanism registry (each mechanism's ops table and data path live in
 * its own file: cma.c, procmem.c, shmbuf.c, queue.c, net.c), the sibling
 * probe used by tools and tests, and the per-size rule table
 * that picks a mechanism for each rendezvous message. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/copy.h"
#include "util/tuning.h"
#include "util/util.h"
#include "xfer/xfer.h"

bool fy_xfer_probe_always(char *why, size_t whylen)
{
    if (why && whylen)
        why[0] = '\0';
    return true;
}

void fy_xfer_copy_libc(void *dst, const void *src, size_t len)
{
    fy_copy(dst, src, len);
}

const struct fy_xfer_ops *const fy_xfer_registry[FY_XFER_NKINDS] = {
    [FY_XFER_CMA] = &fy_xfer_cma_ops,
    [FY_XFER_SHMBUF] = &fy_xfer_shmbuf_ops,
    [FY_XFER_QUEUE] = &fy_xfer_queue_ops,
    [FY_XFER_PROCMEM] = &fy_xfer_procmem_ops,
    [FY_XFER_NET] = &fy_xfer_net_ops,
};

int fy_xfer_parse(const char *name)
{
    if (!name || !*name || !strcmp(name, "auto"))
        return FY_XFER_AUTO;
    for (int k = 0; k < FY_XFER_NKINDS; k++)
        if (!strcmp(name, fy_xfer_registry[k]->name))
            return k;
    return -EINVAL;
}

/* ---- probing between siblings ------------------------------------------- */

static volatile uint64_t sibling_word = 0x46657272792d4f4bull;

bool fy_xfer_probe_siblings(int kind, char *why, size_t whylen)
{
    char scratch[8];
    if (!why || !whylen) {
        why = scratch;
        whylen = sizeof(scratch);
    }
    if (kind < 0 || kind >= FY_XFER_NKINDS) {
        snprintf(why, whylen, "no such mechanism");
        return false;
    }
    const struct fy_xfer_ops *ops = fy_xfer_registry[kind];
    if (!ops->probe(why, whylen))
        return false;
    if (!ops->one_sided)
        return true;
    /* 'hold' keeps child a alive until b is done; b reports through
     * 'res' the errno of its attempt (0: read the right word). */
    int hold[2], res[2];
    if (pipe(hold) != 0) {
        snprintf(why, whylen, "pipe: %s", strerror(errno));
        return false;
    }
    if (pipe(res) != 0) {
        snprintf(why, whylen, "pipe: %s", strerror(errno));
        close(hold[0]);
        close(hold[1]);
        return false;
    }
    fflush(NULL); /* children leave with _exit, but be safe with buffers */
    pid_t a = fork();
    if (a == 0) {
        char c;
        close(hold[1]);
        close(res[0]);
        close(res[1]);
        ssize_t n = read(hold[0], &c, 1); /* until the parent closes it */
        _exit(n < 0);
    }
    pid_t b = a > 0 ? fork() : -1;
    if (b == 0) {
        close(hold[0]);
        close(hold[1]);
        close(res[0]);
        uint64_t got = 0;
        ssize_t n = ops->copy_remote(
            a, &got, (uint64_t)(uintptr_t)&sibling_word, sizeof(got), true);
        int err = n == (ssize_t)sizeof(got) && got == sibling_word ? 0
                  : n < 0                                          ? (int)-n
                                                                   : EIO;
        ssize_t w = write(res[1], &err, sizeof(err));
        _exit(w != (ssize_t)sizeof(err));
    }
    close(res[1]);
    int err = EAGAIN;
    if (b > 0 && read(res[0], &err, sizeof(err)) != (ssize_t)sizeof(err))
        err = ECHILD;
    close(res[0]);
    close(hold[0]);
    close(hold[1]);
    if (b > 0)
        waitpid(b, NULL, 0);
    if (a > 0)
        waitpid(a, NULL, 0);
    if (a < 0 || b < 0) {
        snprintf(why, whylen, "fork: %s", strerror(errno));
        return false;
    }
    if (err == 0)
        return true;
    snprintf(why, whylen, "%s between sibling processes failed: %s%s",
             kind == FY_XFER_CMA ? "process_vm_readv"
                                 : "reading /proc/<pid>/mem",
             strerror(err),
             err == EPERM || err == EACCES
                 ? " (ptrace restrictions: yama ptrace_scope, seccomp or "
                   "container policy)"
                 : "");
    return false;
}

/* ---- rule tables ----------------------------------------------------------
 */

struct fy_xfer_table fy_xfer_active;
unsigned fy_xfer_avail;

static struct fy_xfer_table tuned; /* n == 0: none installed */

const char *fy_xfer_from_name(uint32_t from)
{
    switch (from) {
    case FY_XFER_FROM_DEFAULT:
        return "default";
    case FY_XFER_FROM_ENV:
        return "FERRY_XFER";
    case FY_XFER_FROM_TUNING:
        return "tuning file";
    }
    return "?";
}

static int rules_check(const struct fy_xfer_rule *rules, int n, bool auto_ok)
{
    /* Room for the AUTO rule from 0 that resolving may put in front. */
    if (n < 1 || n > FY_XFER_RULES_MAX ||
        (n == FY_XFER_RULES_MAX && rules[0].min_bytes > 0))
        return -EINVAL;
    for (int i = 0; i < n; i++) {
        if (rules[i].kind >= FY_XFER_NKINDS ||
            (rules[i].kind < 0 && !(auto_ok && rules[i].kind == FY_XFER_AUTO)))
            return -EINVAL;
        if (i > 0 && rules[i].min_bytes <= rules[i - 1].min_bytes)
            return -EINVAL;
    }
    return 0;
}

int fy_xfer_rules_set(const struct fy_xfer_rule *rules, int n)
{
    if (!rules || rules_check(rules, n, true))
        return -EINVAL;
    tuned.from = FY_XFER_FROM_TUNING;
    tuned.n = (uint32_t)n;
    memcpy(tuned.rule, rules, (size_t)n * sizeof(*rules));
    if (fy_xfer_avail) {
        /* Already up: this rank's own receive decisions change. */
        struct fy_xfer_table t;
        if (fy_xfer_table_request(&t) == 0) {
            fy_xfer_table_resolve(&t, fy_xfer_avail, true);
            fy_xfer_active = t;
        }
    }
    return 0;
}

void fy_xfer_rules_clear(void)
{
    tuned.n = 0;
}

int fy_xfer_rules_from_tuning(const struct fy_tuning *t)
{
    if (t->nrules == 0)
        return 0;
    struct fy_xfer_rule rules[FY_XFER_RULES_MAX];
    if (t->nrules > FY_XFER_RULES_MAX ||
        (t->nrules == FY_XFER_RULES_MAX && t->rules[0].min_bytes > 0)) {
        FY_ERROR("tuning file: %d xfer rules, at most %d are supported",
                 t->nrules, FY_XFER_RULES_MAX - 1);
        return -EINVAL;
    }
    for (int i = 0; i < t->nrules; i++) {
        int k = fy_xfer_parse(t->rules[i].mech);
        if (k == -EINVAL) {
            FY_WARN("tuning file: mechanism '%s' (from %llu B) is unknown to "
                    "this Ferry; using auto for that range",
                    t->rules[i].mech,
                    (unsigned long long)t->rules[i].min_bytes);
            k = FY_XFER_AUTO;
        }
        rules[i] = (struct fy_xfer_rule){t->rules[i].min_bytes, k};
    }
    int rc = fy_xfer_rules_set(rules, t->nrules);
    if (rc)
        FY_ERROR("tuning file: xfer rules are not sorted by size");
    return rc;
}

int fy_xfer_rules_parse(const char *text, struct fy_xfer_table *out, char *why,
                        size_t whylen)
{
    char scratch[8];
    if (!why || !whylen) {
        why = scratch;
        whylen = sizeof(scratch);
    }
    struct fy_xfer_table t = {.from = FY_XFER_FROM_ENV};
    char buf[256];
    if (!text || strlen(text) >= sizeof(buf)) {
        snprintf(why, whylen, "empty or too long");
        return -EINVAL;
    }
    snprintf(buf, sizeof(buf), "%s", text);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        if (t.n == FY_XFER_RULES_MAX) {
            snprintf(why, whylen, "more than %d rules", FY_XFER_RULES_MAX);
            return -EINVAL;
        }
        long long min = 0;
        char *colon = strchr(item, ':');
        if (t.n == 0 && colon) {
            snprintf(why, whylen, "the first rule has no size ('%s')", item);
            return -EINVAL;
        }
        if (t.n > 0) {
            if (!colon) {
                snprintf(why, whylen, "'%s' is not SIZE:mechanism", item);
                return -EINVAL;
            }
            *colon = '\0';
            if (fy_parse_size(item, &min) || min <= 0) {
                snprintf(why, whylen, "'%s' is not a size", item);
                return -EINVAL;
            }
            item = colon + 1;
        }
        int k = fy_xfer_parse(item);
        if (k == -EINVAL || !*item) {
            snprintf(why, whylen,
                     "'%s' is not one of auto, cma, shmbuf, "
                     "queue, procmem, net",
                     item);
            return -EINVAL;
        }
        t.rule[t.n].min_bytes = (uint64_t)min;
        t.rule[t.n].kind = k;
        t.n++;
    }
    if (rules_check(t.rule, (int)t.n, true)) {
        snprintf(why, whylen, "sizes must increase from rule to rule");
        return -EINVAL;
    }
    *out = t;
    return 0;
}

int fy_xfer_table_request(struct fy_xfer_table *out)
{
    const char *env = fy_env_str(FY_ENV_XFER);
    if (env && *env && strcmp(env, "auto")) {
        char why[128];
        if (fy_xfer_rules_parse(env, out, why, sizeof(why))) {
            FY_ERROR("FERRY_XFER='%s': %s", env, why);
            return -EINVAL;
        }
        return 0;
    }
    if (tuned.n) {
        *out = tuned;
        return 0;
    }
    /* Built-in default, from measurement (bench/README.md): the single
     * copy (cma, shared by both ranks when the sender is in MPI too) for
     * every rendezvous message, the double buffer only where cma is
     * forbidden. The pipelined double buffer wins a two-rank stream with
     * dedicated, idle cores (64 KiB windowed: 12-15 GB/s), but needs both
     * partners on a CPU at once and collapses when either is descheduled
     * or busy elsewhere: mixed traffic, 2 ranks: 3.0 s vs 2.4 s with cma;
     * 4 ranks on 2 cores: 4.0 s vs 2.0 s; 64 KiB windowed under foreign
     * load 0.6-0.8 vs 3.5-4.3 GB/s. ferry-bench --tune can still write a
     * machine's own crossovers. */
    *out = (struct fy_xfer_table){
        .from = FY_XFER_FROM_DEFAULT, .n = 1, .rule = {{0, FY_XFER_AUTO}}};
    return 0;
}

void fy_xfer_table_resolve(struct fy_xfer_table *t, unsigned avail, bool warn)
{
    int fallback = avail & (1u << FY_XFER_CMA) ? FY_XFER_CMA : FY_XFER_SHMBUF;
    if (t->n < FY_XFER_RULES_MAX && t->rule[0].min_bytes > 0) {
        memmove(&t->rule[1], &t->rule[0], t->n * sizeof(t->rule[0]));
        t->rule[0] = (struct fy_xfer_rule){0, FY_XFER_AUTO};
        t->n++;
    }
    t->rule[0].min_bytes = 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < t->n; i++) {
        struct fy_xfer_rule r = t->rule[i];
        if (r.kind == FY_XFER_AUTO) {
            r.kind = fallback;
        } else if (!(avail & (1u << r.kind))) {
            if (warn)
                FY_WARN("mechanism %s (%s, from %llu B) does not work between "
                        "the ranks of this job (see ferry-info); using %s",
                        fy_xfer_registry[r.kind]->name,
                        fy_xfer_from_name(t->from),
                        (unsigned long long)r.min_bytes,
                        fy_xfer_registry[fallback]->name);
            r.kind = fallback;
        }
        if (n > 0 && t->rule[n - 1].kind == r.kind)
            continue; /* same mechanism as the range below: one range */
        t->rule[n++] = r;
    }
    t->n = n;
}
