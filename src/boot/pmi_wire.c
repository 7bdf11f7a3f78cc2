/* SPDX-License-Identifier: MIT */
/* What the PMI clients read from a launcher, parsed without trusting it:
 * PMI-1 lines ("cmd=get_result rc=0 value=v"), PMI-2 frames (a six-byte
 * decimal length, then "cmd=kvs-get-response;rc=0;value=v;" with ';;' for
 * a ';' inside a value) and the job's process mapping
 * ("(vector,(0,2,4),(2,1,3))"). Pure functions: unit-tested with malformed
 * input in tests/unit/test_pmi_wire.c. Every error says what was wrong. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "boot/boot.h"
#include "util/util.h"

/* Store one attribute "key=value" of 'text' (key and value already split
 * at the first '=' by the caller) into m. */
static int add_attr(struct fy_pmi_msg *m, char *key, char *val,
                    const char *what)
{
    if (m->nattr == FY_PMI_ATTRS) {
        FY_ERROR("%s: more than %d attributes", what, FY_PMI_ATTRS);
        return -EPROTO;
    }
    if (!*key) {
        FY_ERROR("%s: an attribute has an empty name", what);
        return -EPROTO;
    }
    m->key[m->nattr] = key;
    m->val[m->nattr] = val;
    m->nattr++;
    return 0;
}

/* The first attribute must be cmd=<something>. */
static int check_cmd(const struct fy_pmi_msg *m, const char *what)
{
    if (m->nattr == 0 || strcmp(m->key[0], "cmd") || !*m->val[0]) {
        FY_ERROR("%s: the message does not start with cmd=<name>", what);
        return -EPROTO;
    }
    return 0;
}

int fy_pmi1_parse(const char *line, size_t len, struct fy_pmi_msg *out)
{
    static const char what[] = "PMI-1 reply from the launcher";
    if (len >= sizeof(out->buf)) {
        FY_ERROR("%s: %zu bytes, more than Ferry's limit of %zu", what, len,
                 sizeof(out->buf) - 1);
        return -EPROTO;
    }
    if (memchr(line, '\0', len)) {
        FY_ERROR("%s: holds a NUL byte", what);
        return -EPROTO;
    }
    out->nattr = 0;
    memcpy(out->buf, line, len);
    out->buf[len] = '\0';
    char *p = out->buf;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (!*p)
            break;
        char *tok = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r')
            p++;
        if (*p)
            *p++ = '\0';
        char *eq = strchr(tok, '=');
        if (!eq) {
            FY_ERROR("%s: '%.40s' is not key=value", what, tok);
            return -EPROTO;
        }
        *eq = '\0';
        int rc = add_attr(out, tok, eq + 1, what);
        if (rc)
            return rc;
    }
    return check_cmd(out, what);
}

int fy_pmi2_frame_len(const char hdr[FY_PMI2_HDR], size_t *len_out)
{
    /* Decimal, padded with spaces on either side (launchers differ). */
    size_t v = 0;
    int digits = 0, i = 0;
    while (i < FY_PMI2_HDR && hdr[i] == ' ')
        i++;
    for (; i < FY_PMI2_HDR && hdr[i] >= '0' && hdr[i] <= '9'; i++, digits++)
        v = v * 10 + (size_t)(hdr[i] - '0');
    while (i < FY_PMI2_HDR && hdr[i] == ' ')
        i++;
    if (!digits || i != FY_PMI2_HDR) {
        FY_ERROR("PMI-2 frame from the launcher: the length field '%.6s' is "
                 "not a decimal number",
                 hdr);
        return -EPROTO;
    }
    if (v == 0 || v >= FY_PMI_MSG_MAX) {
        FY_ERROR("PMI-2 frame from the launcher: length %zu is outside 1 to "
                 "%d bytes",
                 v, FY_PMI_MSG_MAX - 1);
        return -EPROTO;
    }
    *len_out = v;
    return 0;
}

int fy_pmi2_parse(const char *body, size_t len, struct fy_pmi_msg *out)
{
    static const char what[] = "PMI-2 reply from the launcher";
    if (len >= sizeof(out->buf)) {
        FY_ERROR("%s: %zu bytes, more than Ferry's limit of %zu", what, len,
                 sizeof(out->buf) - 1);
        return -EPROTO;
    }
    if (memchr(body, '\0', len)) {
        FY_ERROR("%s: holds a NUL byte", what);
        return -EPROTO;
    }
    out->nattr = 0;
    /* Unescape into buf as we go: a value never grows, so buf (len + 1
     * bytes used at most) is enough. */
    size_t i = 0, o = 0;
    while (i < len) {
        char *key = &out->buf[o];
        while (i < len && body[i] != '=' && body[i] != ';')
            out->buf[o++] = body[i++];
        if (i == len || body[i] != '=') {
            out->buf[o] = '\0';
            FY_ERROR("%s: '%.40s' is not key=value;", what, key);
            return -EPROTO;
        }
        out->buf[o++] = '\0';
        i++;
        char *val = &out->buf[o];
        for (;;) {
            if (i == len) {
                FY_ERROR("%s: the value of '%.40s' has no closing ';'", what,
                         key);
                return -EPROTO;
            }
            if (body[i] == ';') {
                if (i + 1 < len && body[i + 1] == ';') {
                    out->buf[o++] = ';'; /* ';;' is a ';' of the value */
                    i += 2;
                    continue;
                }
                i++;
                break;
            }
            out->buf[o++] = body[i++];
        }
        out->buf[o++] = '\0';
        int rc = add_attr(out, key, val, what);
        if (rc)
            return rc;
    }
    return check_cmd(out, what);
}

const char *fy_pmi_msg_get(const struct fy_pmi_msg *m, const char *key)
{
    for (int i = 0; i < m->nattr; i++)
        if (!strcmp(m->key[i], key))
            return m->val[i];
    return NULL;
}

/* ---- PMI_process_mapping -------------------------------------------------
 * "(vector,(n0,c0,p0),(n1,c1,p1),...)": nodes n0..n0+c0-1 get p0
 * consecutive ranks each, then the next block. A vector covering fewer
 * ranks than the job is applied again from its start (a cyclic
 * placement), one covering more is cut at the job's size; a vector with no
 * block, a count or ppn of 0 or any other text is an error. */

static void skip_space(const char **p)
{
    while (**p == ' ' || **p == '\t')
        (*p)++;
}

static int expect_char(const char **p, char c, const char *s)
{
    skip_space(p);
    if (**p != c) {
        FY_ERROR("launcher's process mapping '%.80s': expected '%c' at "
                 "offset %d",
                 s, c, (int)(*p - s));
        return -EINVAL;
    }
    (*p)++;
    return 0;
}

static int read_int(const char **p, int lo, int *out, const char *s)
{
    skip_space(p);
    const char *start = *p;
    long long v = 0;
    while (**p >= '0' && **p <= '9') {
        v = v * 10 + (**p - '0');
        if (v > INT_MAX) {
            FY_ERROR("launcher's process mapping '%.80s': number too large at "
                     "offset %d",
                     s, (int)(start - s));
            return -EINVAL;
        }
        (*p)++;
    }
    if (*p == start || v < lo) {
        FY_ERROR("launcher's process mapping '%.80s': expected a number of at "
                 "least %d at offset %d",
                 s, lo, (int)(start - s));
        return -EINVAL;
    }
    *out = (int)v;
    return 0;
}

#define MAP_BLOCKS_MAX 1024

int fy_pmi_parse_mapping(const char *s, int size, int *node_of)
{
    struct {
        int node, count, ppn;
    } blk[MAP_BLOCKS_MAX];
    int nblk = 0, rc;
    const char *p = s;
    if (size < 1)
        return -EINVAL;
    if ((rc = expect_char(&p, '(', s)))
        return rc;
    skip_space(&p);
    if (strncmp(p, "vector", 6)) {
        FY_ERROR("launcher's process mapping '%.80s': not a '(vector,...)'", s);
        return -EINVAL;
    }
    p += 6;
    for (;;) {
        skip_space(&p);
        if (*p == ')')
            break;
        if ((rc = expect_char(&p, ',', s)) || (rc = expect_char(&p, '(', s)))
            return rc;
        if (nblk == MAP_BLOCKS_MAX) {
            FY_ERROR("launcher's process mapping '%.80s': more than %d blocks",
                     s, MAP_BLOCKS_MAX);
            return -EINVAL;
        }
        if ((rc = read_int(&p, 0, &blk[nblk].node, s)) ||
            (rc = expect_char(&p, ',', s)) ||
            (rc = read_int(&p, 1, &blk[nblk].count, s)) ||
            (rc = expect_char(&p, ',', s)) ||
            (rc = read_int(&p, 1, &blk[nblk].ppn, s)) ||
            (rc = expect_char(&p, ')', s)))
            return rc;
        if (blk[nblk].node > INT_MAX - blk[nblk].count) {
            FY_ERROR("launcher's process mapping '%.80s': node ids overflow",
                     s);
            return -EINVAL;
        }
        nblk++;
    }
    p++; /* the vector's ')' */
    skip_space(&p);
    if (*p) {
        FY_ERROR("launcher's process mapping '%.80s': text after the vector",
                 s);
        return -EINVAL;
    }
    if (!nblk) {
        FY_ERROR("launcher's process mapping '%.80s': no blocks", s);
        return -EINVAL;
    }
    /* Deal ranks out block by block, again from the first block while
     * ranks remain. */
    int r = 0;
    while (r < size) {
        for (int b = 0; b < nblk && r < size; b++)
            for (int n = 0; n < blk[b].count && r < size; n++)
                for (int k = 0; k < blk[b].ppn && r < size; k++)
                    node_of[r++] = blk[b].node + n;
    }
    return 0;
}
