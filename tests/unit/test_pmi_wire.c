/* SPDX-License-Identifier: MIT */
/* The PMI parsers (src/boot/pmi_wire.c) on good and malformed input: PMI-1
 * lines, PMI-2 length fields and bodies (';;' escapes), and the process
 * mapping, including cyclic vectors, overflowing numbers and garbage. Bad
 * input must give an error (logged), never a crash or a write past the
 * output (node_of has a guard entry after the job's ranks). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "boot/boot.h"
#include "harness.h"
#include "util/util.h"

static struct fy_pmi_msg m;

static int v1(const char *s)
{
    return fy_pmi1_parse(s, strlen(s), &m);
}

static int v2(const char *s)
{
    return fy_pmi2_parse(s, strlen(s), &m);
}

static const char *get(const char *k)
{
    const char *v = fy_pmi_msg_get(&m, k);
    return v ? v : "(none)";
}

#define GUARD (-77)
#define EQ_INT(a, b) TAP_EQ_INT(a, b, "%s", #a)
#define EQ_STR(a, b) TAP_EQ_STR(a, b, "%s", #a)
#define EQ_SIZE(a, b) TAP_EQ_SIZE(a, b, "%s", #a)

/* Parse 'map' for 'size' ranks; the ranks' nodes as "n,n,..." in out. */
static int map(const char *s, int size, char *out, size_t len)
{
    int *node_of = malloc(((size_t)size + 1) * sizeof(int));
    for (int i = 0; i <= size; i++)
        node_of[i] = GUARD;
    int rc = fy_pmi_parse_mapping(s, size, node_of);
    out[0] = '\0';
    for (int i = 0; !rc && i < size; i++)
        snprintf(out + strlen(out), len - strlen(out), "%s%d", i ? "," : "",
                 node_of[i]);
    EQ_INT(node_of[size], GUARD); /* nothing written past the job */
    free(node_of);
    return rc;
}

int main(void)
{
    char buf[256];
    size_t len;

    /* ---- PMI-1 ---- */
    EQ_INT(v1("cmd=get_result rc=0 msg=success value=(vector,(0,1,3))"), 0);
    EQ_STR(m.val[0], "get_result");
    EQ_STR(get("rc"), "0");
    EQ_STR(get("value"), "(vector,(0,1,3))");
    EQ_STR(get("nothere"), "(none)");
    EQ_INT(v1("  cmd=barrier_out  \r"), 0);
    EQ_INT(m.nattr, 1);
    EQ_INT(v1("cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024"), 0);
    EQ_STR(get("vallen_max"), "1024");
    EQ_INT(v1("cmd=put_result rc=0 empty="), 0);
    EQ_STR(get("empty"), "");
    /* Malformed */
    EQ_INT(v1(""), -EPROTO);
    EQ_INT(v1("rc=0 cmd=x"), -EPROTO);                   /* cmd not first */
    EQ_INT(v1("cmd= rc=0"), -EPROTO);                    /* empty cmd */
    EQ_INT(v1("cmd=x garbage"), -EPROTO);                /* word without '=' */
    EQ_INT(v1("cmd=x =v"), -EPROTO);                     /* empty key */
    EQ_INT(fy_pmi1_parse("cmd=x\0y=1", 9, &m), -EPROTO); /* NUL */
    {
        /* Too many attributes, too long a line. */
        char many[400] = "cmd=x";
        for (int i = 0; i < FY_PMI_ATTRS + 2; i++)
            snprintf(many + strlen(many), sizeof(many) - strlen(many), " k%d=v",
                     i);
        EQ_INT(v1(many), -EPROTO);
        char *huge = malloc(FY_PMI_MSG_MAX + 10);
        memset(huge, 'a', FY_PMI_MSG_MAX + 9);
        memcpy(huge, "cmd=", 4);
        huge[FY_PMI_MSG_MAX + 9] = '\0';
        EQ_INT(v1(huge), -EPROTO);
        free(huge);
    }

    /* ---- PMI-2 ---- */
    EQ_INT(fy_pmi2_frame_len("    40", &len), 0);
    EQ_SIZE(len, 40);
    EQ_INT(fy_pmi2_frame_len("40    ", &len), 0);
    EQ_SIZE(len, 40);
    EQ_INT(fy_pmi2_frame_len("      ", &len), -EPROTO);
    EQ_INT(fy_pmi2_frame_len("     0", &len), -EPROTO);
    EQ_INT(fy_pmi2_frame_len("  -4  ", &len), -EPROTO);
    EQ_INT(fy_pmi2_frame_len("4 0   ", &len), -EPROTO);
    EQ_INT(fy_pmi2_frame_len("999999", &len), -EPROTO); /* too long */
    EQ_INT(fy_pmi2_frame_len("12ab  ", &len), -EPROTO);
    EQ_INT(
        v2("cmd=fullinit-response;rc=0;rank=2;size=3;appnum=0;debugged=FALSE;"),
        0);
    EQ_STR(m.val[0], "fullinit-response");
    EQ_STR(get("size"), "3");
    EQ_INT(v2("cmd=kvs-get-response;rc=0;found=TRUE;value=a;;b;;;"), 0);
    EQ_STR(get("value"), "a;b;"); /* ';;' is an escaped ';' */
    EQ_STR(get("found"), "TRUE");
    EQ_INT(v2("cmd=x;v=;"), 0);
    EQ_STR(get("v"), "");
    EQ_INT(v2("cmd=x;v=1"), -EPROTO); /* no closing ';' */
    EQ_INT(v2("cmd=x;;"), -EPROTO);   /* escaped ';' then nothing */
    EQ_INT(v2("cmd=x;novalue;"), -EPROTO);
    EQ_INT(v2("rc=0;cmd=x;"), -EPROTO);
    EQ_INT(v2("cmd=x;=v;"), -EPROTO);
    EQ_INT(v2(""), -EPROTO);
    EQ_INT(fy_pmi2_parse("cmd=x;a=\0;", 10, &m), -EPROTO);

    /* ---- process mapping ---- */
    EQ_INT(map("(vector,(0,1,3))", 3, buf, sizeof(buf)), 0);
    EQ_STR(buf, "0,0,0");
    EQ_INT(map("(vector,(0,2,2))", 4, buf, sizeof(buf)), 0);
    EQ_STR(buf, "0,0,1,1");
    EQ_INT(map(" ( vector , (0,1,2), (1,1,1) ) ", 3, buf, sizeof(buf)), 0);
    EQ_STR(buf, "0,0,1");
    /* Cyclic: fewer ranks than the job, applied again. */
    EQ_INT(map("(vector,(0,2,1))", 5, buf, sizeof(buf)), 0);
    EQ_STR(buf, "0,1,0,1,0");
    /* More than the job: cut. */
    EQ_INT(map("(vector,(3,4,8))", 2, buf, sizeof(buf)), 0);
    EQ_STR(buf, "3,3");
    EQ_INT(map("(vector,(0,1,2147483647))", 3, buf, sizeof(buf)), 0);
    EQ_STR(buf, "0,0,0");
    /* Malformed */
    const char *bad[] = {
        "",
        "(vector)",                   /* no block */
        "(vector,)",                  /* empty */
        "(vector,(0,1))",             /* two numbers */
        "(vector,(0,1,3,4))",         /* four */
        "(vector,(0,0,3))",           /* no nodes */
        "(vector,(0,1,0))",           /* no ranks per node */
        "(vector,(-1,1,3))",          /* negative node */
        "(vector,(0,1,3)",            /* unclosed */
        "(vector,(0,1,3)) junk",      /* trailing text */
        "(vectr,(0,1,3))",            /* not a vector */
        "vector,(0,1,3)",             /* no parenthesis */
        "(vector,(0,1,99999999999))", /* overflow */
        "(vector,(2147483647,2,1))",  /* node ids overflow */
        "(vector,(a,1,3))",
        "(vector;(0,1,3))",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = map(bad[i], 3, buf, sizeof(buf));
        tap_report(rc == -EINVAL, __FILE__, __LINE__, bad[i],
                   "malformed mapping rejected (rc %d)", rc);
    }
    {
        /* More blocks than the parser takes: an error, no overflow. */
        size_t n = 2000 * 8 + 16;
        char *s = malloc(n);
        strcpy(s, "(vector");
        for (int i = 0; i < 2000; i++)
            strcat(s, ",(0,1,1)");
        strcat(s, ")");
        EQ_INT(map(s, 4, buf, sizeof(buf)), -EINVAL);
        free(s);
    }
    return tap_done();
}
