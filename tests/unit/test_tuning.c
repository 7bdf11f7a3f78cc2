/* SPDX-License-Identifier: MIT */
/* The tuning-file parser (src/util/tuning.c): a good file with every key,
 * each kind of bad line rejected with file:line in the message, a missing
 * file reported as -ENOENT, the default location, and save/load round trip. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "util/tuning.h"

static char dir[] = "/tmp/ferry-test-tuning-XXXXXX";

static void write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "w");
    if (!f || fwrite(text, 1, len, f) != len) {
        perror(path);
        exit(1);
    }
    fclose(f);
}

/* Parse 'text' as file "t.conf"; expect -EINVAL and an error that starts
 * with "t.conf:<line>:" and contains 'needle'. */
static void expect_bad(const char *text, int line, const char *needle,
                       const char *what)
{
    struct fy_tuning t;
    char err[512] = "";
    int rc = fy_tuning_parse("t.conf", text, &t, err, sizeof(err));
    char prefix[32];
    snprintf(prefix, sizeof(prefix), "t.conf:%d: ", line);
    TAP_EQ_INT(rc, -EINVAL, "%s: rejected", what);
    if (!TAP_OK(!strncmp(err, prefix, strlen(prefix)) && strstr(err, needle),
                "%s: message names %s and says '%s'", what, prefix, needle))
        tap_diag("message was: %s", err);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path[256], err[512];
    struct fy_tuning t;

    /* ---- a good file: every key, comments, blank lines, suffixes ---- */
    const char *good = "# written by hand\n"
                       "\n"
                       "eager_max   = 8000   # bytes\n"
                       "  fastbox_max=40\n"
                       "cell_size = 16K\r\n"
                       "shmbuf_size = 64KiB\n"
                       "split_min = 96K\n"
                       "xfer.1M = cma\n"
                       "xfer.0 = queue\n"
                       "\txfer.65536 = shmbuf  \n"
                       "xfer.16777216 = procmem";
    snprintf(path, sizeof(path), "%s/good.conf", dir);
    write_file(path, good, strlen(good));
    memset(&t, 0xa5, sizeof(t));
    TAP_EQ_INT(fy_tuning_load(path, &t), 0, "good file loads");
    TAP_OK(t.has_eager_max && t.eager_max == 8000, "eager_max = 8000");
    TAP_OK(t.has_fastbox_max && t.fastbox_max == 40, "fastbox_max = 40");
    TAP_OK(t.has_cell_size && t.cell_size == 16384, "cell_size = 16K");
    TAP_OK(t.has_shmbuf_size && t.shmbuf_size == 65536, "shmbuf_size = 64KiB");
    TAP_OK(t.has_split_min && t.split_min == 98304, "split_min = 96K");
    TAP_EQ_INT(t.nrules, 4, "four xfer rules");
    TAP_OK(t.rules[0].min_bytes == 0 && !strcmp(t.rules[0].mech, "queue") &&
               t.rules[1].min_bytes == 65536 &&
               !strcmp(t.rules[1].mech, "shmbuf") &&
               t.rules[2].min_bytes == 1048576 &&
               !strcmp(t.rules[2].mech, "cma") &&
               t.rules[3].min_bytes == 16777216 &&
               !strcmp(t.rules[3].mech, "procmem"),
           "rules sorted by min_bytes");
    TAP_EQ_STR(fy_tuning_rule_for(&t, 0)->mech, "queue", "0 B -> queue");
    TAP_EQ_STR(fy_tuning_rule_for(&t, 65535)->mech, "queue",
               "65535 B -> queue");
    TAP_EQ_STR(fy_tuning_rule_for(&t, 65536)->mech, "shmbuf",
               "64 KiB -> shmbuf");
    TAP_EQ_STR(fy_tuning_rule_for(&t, 5 << 20)->mech, "cma", "5 MiB -> cma");
    TAP_EQ_STR(fy_tuning_rule_for(&t, 1ull << 40)->mech, "procmem",
               "1 TiB -> procmem");

    /* Only some keys: the rest stay unset; no rule below the first. */
    TAP_EQ_INT(
        fy_tuning_parse("t.conf", "xfer.4096 = cma\n", &t, err, sizeof(err)), 0,
        "a file with one rule parses");
    TAP_OK(!t.has_eager_max && !t.has_cell_size && !t.has_split_min &&
               t.nrules == 1,
           "unset keys are flagged unset");
    /* split_min = 0 is a setting (the shared copy off), not "unset". */
    TAP_EQ_INT(
        fy_tuning_parse("t.conf", "split_min = 0\n", &t, err, sizeof(err)), 0,
        "split_min = 0 parses");
    TAP_OK(t.has_split_min && t.split_min == 0, "split_min = 0 is set, off");
    TAP_OK(fy_tuning_rule_for(&t, 4095) == NULL, "no rule below the first");
    TAP_EQ_INT(fy_tuning_parse("t.conf", "", &t, err, sizeof(err)), 0,
               "an empty file parses");
    TAP_EQ_INT(
        fy_tuning_parse("t.conf", "# only a comment\n\n", &t, err, sizeof(err)),
        0, "a comment-only file parses");
    TAP_EQ_INT(fy_tuning_parse("t.conf", "eager_max = 1048448\n", &t, err,
                               sizeof(err)),
               0, "eager_max at its limit (1 MiB cell minus header)");

    /* ---- each kind of bad line ---- */
    expect_bad("eager_max 100\n", 1, "expected 'key = value'", "no '='");
    expect_bad("# c\n= 100\n", 2, "missing key", "no key");
    expect_bad("eager_max =\n", 1, "missing value", "no value");
    expect_bad("eager_max = # nothing\n", 1, "missing value",
               "value only a comment");
    expect_bad("\n\neagre_max = 100\n", 3, "unknown key 'eagre_max'",
               "misspelt key");
    expect_bad("eager max = 100\n", 1, "not a valid key", "space in key");
    expect_bad("eager_max = lots\n", 1, "is not a size", "non-numeric size");
    expect_bad("eager_max = -5\n", 1, "is not a size", "negative size");
    expect_bad("eager_max = 12 34\n", 1, "unexpected text", "two values");
    expect_bad("eager_max = 10x\n", 1, "is not a size", "bad suffix");
    expect_bad("eager_max = 99999999999999999999999\n", 1, "is not a size",
               "overflowing number");
    expect_bad("eager_max = 2M\n", 1, "out of range", "eager_max too big");
    expect_bad("fastbox_max = 1785\n", 1, "out of range",
               "fastbox_max too big");
    expect_bad("cell_size = 512\n", 1, "out of range", "cell_size too small");
    expect_bad("cell_size = 2M\n", 1, "out of range", "cell_size too big");
    expect_bad("cell_size = 16400\n", 1, "not a multiple of 64",
               "cell_size not a multiple of 64");
    expect_bad("shmbuf_size = 1K\n", 1, "out of range",
               "shmbuf_size too small");
    expect_bad("shmbuf_size = 32M\n", 1, "out of range", "shmbuf_size too big");
    expect_bad("split_min = 2^20\n", 1, "is not a size",
               "split_min not a size");
    expect_bad("split_min = -1\n", 1, "is not a size", "split_min negative");
    expect_bad("split_min = 1000000G\n", 1, "out of range",
               "split_min beyond 2^48");
    expect_bad("split_min = 64K\nsplit_min = 0\n", 2,
               "duplicate key 'split_min' (first set on line 1)",
               "split_min twice");
    expect_bad("eager_max = 100\neager_max = 200\n", 2,
               "duplicate key 'eager_max' (first set on line 1)",
               "duplicate key");
    expect_bad("xfer.1024 = cma\nxfer.1K = shmbuf\n", 2,
               "duplicate rule for 1024 bytes (first set on line 1)",
               "duplicate rule (same size spelt two ways)");
    expect_bad("xfer.big = cma\n", 1, "expected xfer.<min_bytes>",
               "rule with a non-numeric size");
    expect_bad("xfer. = cma\n", 1, "expected xfer.<min_bytes>",
               "rule without a size");
    expect_bad("xfer.1P = cma\n", 1, "expected xfer.<min_bytes>",
               "rule with a bad suffix");
    expect_bad("xfer.1000000G = cma\n", 1, "beyond the limit",
               "rule size above 2^48");
    expect_bad("xfer.99999999999999999999 = cma\n", 1,
               "expected xfer.<min_bytes>", "rule size overflowing");
    expect_bad("xfer.0 = CMA\n", 1, "is not a mechanism name",
               "upper-case mechanism");
    expect_bad("xfer.0 = 9p\n", 1, "is not a mechanism name",
               "mechanism starting with a digit");
    expect_bad("xfer.0 = averyveryverylongname\n", 1, "is not a mechanism name",
               "mechanism name too long");
    expect_bad("xfer.0 = c/ma\n", 1, "is not a mechanism name",
               "mechanism with a slash");
    {
        char many[4096] = "";
        for (int i = 0; i <= FY_TUNING_MAX_RULES; i++) {
            char l[64];
            snprintf(l, sizeof(l), "xfer.%d = cma\n", i * 100);
            strcat(many, l);
        }
        expect_bad(many, FY_TUNING_MAX_RULES + 1, "too many xfer rules",
                   "more rules than the limit");
    }
    {
        char longline[FY_TUNING_LINE_MAX + 64];
        memset(longline, ' ', sizeof(longline));
        memcpy(longline, "# x", 3);
        longline[sizeof(longline) - 2] = '\n';
        longline[sizeof(longline) - 1] = '\0';
        expect_bad(longline, 1, "line longer than", "over-long line");
    }
    expect_bad("eager_max = 10\x01\n", 1, "control character",
               "control character");
    expect_bad("cell_size = 4K\neager_max = 8000\n", 2,
               "does not fit in one cell (cell_size = 4096 on line 1",
               "eager_max larger than the cell's payload");

    /* ---- the protocol keys (seed 001's Push-Pull, seed 002's write) ---- */
    const char *proto_good = "proto = pushpull\n"
                             "btp = 64K\n"
                             "btp1 = 512\n"
                             "recv_write = 0\n"
                             "recv_write_min = 1M\n";
    memset(&t, 0xa5, sizeof(t));
    TAP_EQ_INT(fy_tuning_parse("t.conf", proto_good, &t, err, sizeof(err)), 0,
               "protocol keys parse (%s)", err);
    TAP_OK(t.has_proto && !strcmp(t.proto, "pushpull"), "proto = pushpull");
    TAP_OK(t.has_btp && t.btp == 65536, "btp = 64K");
    TAP_OK(t.has_btp1 && t.btp1 == 512, "btp1 = 512");
    TAP_OK(t.has_recv_write && t.recv_write == 0, "recv_write = 0 is set, off");
    TAP_OK(t.has_recv_write_min && t.recv_write_min == 1048576,
           "recv_write_min = 1M");
    TAP_OK(!t.has_eager_max && !t.has_split_min && t.nrules == 0,
           "the other keys stay unset");
    for (size_t i = 0; i < sizeof(fy_tuning_protos) / sizeof(*fy_tuning_protos);
         i++) {
        char l[64];
        snprintf(l, sizeof(l), "proto = %s\n", fy_tuning_protos[i]);
        TAP_EQ_INT(fy_tuning_parse("t.conf", l, &t, err, sizeof(err)), 0,
                   "proto = %s accepted", fy_tuning_protos[i]);
        TAP_EQ_STR(t.proto, fy_tuning_protos[i], "proto = %s kept",
                   fy_tuning_protos[i]);
    }
    TAP_EQ_INT(
        fy_tuning_parse("t.conf", "btp = 0\nbtp1 = 0\n", &t, err, sizeof(err)),
        0, "btp = 0 (Push-Zero's amount) accepted");
    expect_bad("proto = pull\n", 1, "not one of auto, pushpull",
               "unknown protocol");
    expect_bad("proto = PushPull\n", 1, "not one of", "protocol in capitals");
    expect_bad("proto = auto\nproto = pushall\n", 2,
               "duplicate key 'proto' (first set on line 1)", "proto twice");
    expect_bad("btp = lots\n", 1, "is not a size", "btp not a size");
    expect_bad("btp = 2G\n", 1, "out of range", "btp beyond 1 GiB");
    expect_bad("btp1 = -1\n", 1, "is not a size", "btp1 negative");
    expect_bad("btp = 4K\nbtp1 = 8K\n", 2,
               "btp1 = 8192 is larger than btp = 4096 (line 1)",
               "btp1 larger than btp");
    expect_bad("recv_write = yes\n", 1, "is not 0 or 1", "recv_write not 0/1");
    expect_bad("recv_write = 2\n", 1, "is not 0 or 1", "recv_write = 2");
    expect_bad("recv_write = 1\nrecv_write = 0\n", 2,
               "duplicate key 'recv_write'", "recv_write twice");
    expect_bad("recv_write_min = 16Q\n", 1, "is not a size",
               "recv_write_min bad suffix");
    expect_bad("btp2 = 4K\n", 1, "unknown key 'btp2'", "unknown btp key");

    /* ---- the collectives' thresholds (ferry-bench --coll --tune) ---- */
    memset(&t, 0xa5, sizeof(t));
    TAP_EQ_INT(fy_tuning_parse("t.conf",
                               "coll_cma_min = 48K\ncoll_slice_min = 4096\n"
                               "coll_direct_min = 512K\n",
                               &t, err, sizeof(err)),
               0, "collective keys parse (%s)", err);
    TAP_OK(t.has_coll_cma_min && t.coll_cma_min == 49152, "coll_cma_min = 48K");
    TAP_OK(t.has_coll_slice_min && t.coll_slice_min == 4096,
           "coll_slice_min = 4096");
    TAP_OK(t.has_coll_direct_min && t.coll_direct_min == 524288,
           "coll_direct_min = 512K");
    TAP_OK(!t.has_eager_max && !t.has_btp && t.nrules == 0,
           "the other keys stay unset");
    TAP_EQ_INT(
        fy_tuning_parse("t.conf", "coll_cma_min = 0\n", &t, err, sizeof(err)),
        0, "coll_cma_min = 0 (always single copy) accepted");
    TAP_OK(t.has_coll_cma_min && t.coll_cma_min == 0 && !t.has_coll_slice_min,
           "coll_cma_min = 0 is set, coll_slice_min unset");
    expect_bad("coll_cma_min = big\n", 1, "is not a size",
               "coll_cma_min not a size");
    expect_bad("coll_slice_min = -5\n", 1, "is not a size",
               "coll_slice_min negative");
    expect_bad("coll_direct_min = 1K\ncoll_direct_min = 2K\n", 2,
               "duplicate key 'coll_direct_min' (first set on line 1)",
               "coll_direct_min twice");
    expect_bad("coll_slice_min = 1K\ncoll_slice_min = 2K\n", 2,
               "duplicate key 'coll_slice_min' (first set on line 1)",
               "coll_slice_min twice");
    expect_bad("coll_cma_min = 1G\n# x\ncoll_cma_min = 2K\n", 3,
               "duplicate key 'coll_cma_min' (first set on line 1)",
               "coll_cma_min twice");
    expect_bad("coll_cma_min = 1P\n", 1, "is not a size",
               "coll_cma_min bad suffix");
    expect_bad("coll_min = 1K\n", 1, "unknown key 'coll_min'",
               "unknown coll key");

    /* A failed parse leaves the output untouched. */
    memset(&t, 0, sizeof(t));
    t.eager_max = 777;
    fy_tuning_parse("t.conf", "eager_max = 5\nbogus\n", &t, err, sizeof(err));
    TAP_EQ_INT(t.eager_max, 777, "output untouched on error");

    /* The file variant names the real path and line. */
    snprintf(path, sizeof(path), "%s/bad.conf", dir);
    write_file(path, "eager_max = 100\nxfer.0 = \n", 26);
    int rc = fy_tuning_load_msg(path, &t, err, sizeof(err));
    char want[300];
    snprintf(want, sizeof(want), "%s:2: missing value for 'xfer.0'", path);
    TAP_EQ_INT(rc, -EINVAL, "bad file: -EINVAL");
    TAP_EQ_STR(err, want, "bad file: message names path:line");
    write_file(path, "eager_max = 1\n\0\n", 16);
    TAP_EQ_INT(fy_tuning_load_msg(path, &t, err, sizeof(err)), -EINVAL,
               "file with a NUL byte rejected");
    TAP_OK(strstr(err, ":2: NUL byte") != NULL, "NUL byte: line named (%s)",
           err);
    TAP_EQ_INT(fy_tuning_load(dir, &t), -EINVAL, "a directory is rejected");
    /* A FIFO would block open() for reading until a writer came: refused
     * at once instead. So is a device. */
    snprintf(path, sizeof(path), "%s/fifo.conf", dir);
    TAP_EQ_INT(mkfifo(path, 0600), 0, "mkfifo");
    TAP_EQ_INT(fy_tuning_load(path, &t), -EINVAL, "a FIFO is refused");
    unlink(path);
    TAP_EQ_INT(fy_tuning_load("/dev/zero", &t), -EINVAL, "a device is refused");

    /* ---- missing file: not an error ---- */
    snprintf(path, sizeof(path), "%s/absent.conf", dir);
    TAP_EQ_INT(fy_tuning_load(path, &t), -ENOENT, "missing file: -ENOENT");
    TAP_EQ_INT(fy_tuning_load_msg(path, &t, err, sizeof(err)), -ENOENT,
               "missing file (msg variant): -ENOENT");
    TAP_EQ_STR(err, "", "missing file: no message");

    /* ---- default location ---- */
    char where[256];
    setenv("FERRY_TUNING", "/etc/x.conf", 1);
    TAP_OK(!fy_tuning_default_path(where, sizeof(where)) &&
               !strcmp(where, "/etc/x.conf"),
           "FERRY_TUNING wins");
    setenv("FERRY_TUNING", "", 1);
    setenv("XDG_CONFIG_HOME", "/xdg", 1);
    setenv("HOME", "/home/u", 1);
    TAP_OK(!fy_tuning_default_path(where, sizeof(where)) &&
               !strcmp(where, "/xdg/ferry/tuning.conf"),
           "then XDG_CONFIG_HOME (%s)", where);
    unsetenv("XDG_CONFIG_HOME");
    TAP_OK(!fy_tuning_default_path(where, sizeof(where)) &&
               !strcmp(where, "/home/u/.config/ferry/tuning.conf"),
           "then HOME/.config (%s)", where);
    unsetenv("HOME");
    unsetenv("FERRY_TUNING");
    TAP_EQ_INT(fy_tuning_default_path(where, sizeof(where)), -ENOENT,
               "nothing set: -ENOENT");
    setenv("FERRY_TUNING", "/a/long/path", 1);
    TAP_EQ_INT(fy_tuning_default_path(where, 5), -ENAMETOOLONG,
               "too small a buffer: -ENAMETOOLONG");
    unsetenv("FERRY_TUNING");

    /* ---- save and load back, creating parent directories ---- */
    struct fy_tuning w;
    memset(&w, 0, sizeof(w));
    w.has_eager_max = true;
    w.eager_max = 12288;
    w.has_split_min = true;
    w.split_min = 0;
    w.nrules = 2;
    w.rules[0].min_bytes = 0;
    strcpy(w.rules[0].mech, "shmbuf");
    w.rules[1].min_bytes = 262144;
    strcpy(w.rules[1].mech, "cma");
    w.has_proto = true;
    strcpy(w.proto, "pushall");
    w.has_btp = true;
    w.btp = 16384;
    w.has_btp1 = true;
    w.btp1 = 0;
    w.has_recv_write = true;
    w.recv_write = 1;
    w.has_recv_write_min = true;
    w.recv_write_min = 65536;
    w.has_coll_cma_min = true;
    w.coll_cma_min = 0;
    w.has_coll_slice_min = true;
    w.coll_slice_min = 8192;
    w.has_coll_direct_min = true;
    w.coll_direct_min = 0;
    snprintf(path, sizeof(path), "%s/sub/dir/tuning.conf", dir);
    TAP_EQ_INT(fy_tuning_save(path, &w, "written by test_tuning\n\nline 3"), 0,
               "save creates parents and writes");
    memset(&t, 0, sizeof(t));
    TAP_EQ_INT(fy_tuning_load(path, &t), 0, "saved file loads");
    TAP_OK(t.has_split_min && t.split_min == 0,
           "round trip keeps split_min = 0 (off, not unset)");
    TAP_OK(t.has_eager_max && t.eager_max == 12288 && t.nrules == 2 &&
               !strcmp(t.rules[1].mech, "cma") &&
               t.rules[1].min_bytes == 262144,
           "round trip keeps every value");
    TAP_OK(t.has_proto && !strcmp(t.proto, "pushall") && t.has_btp &&
               t.btp == 16384 && t.has_btp1 && t.btp1 == 0 &&
               t.has_recv_write && t.recv_write == 1 && t.has_recv_write_min &&
               t.recv_write_min == 65536,
           "round trip keeps the protocol keys (btp1 = 0 set, not unset)");
    TAP_OK(t.has_coll_cma_min && t.coll_cma_min == 0 && t.has_coll_slice_min &&
               t.coll_slice_min == 8192 && t.has_coll_direct_min &&
               t.coll_direct_min == 0,
           "round trip keeps the collective keys (coll_cma_min = 0 and "
           "coll_direct_min = 0 set)");

    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        tap_diag("could not remove %s", dir);
    return tap_done();
}
