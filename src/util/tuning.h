/* SPDX-License-Identifier: MIT */
/* The tuning file written by `ferry-bench --tune` and read at start-up:
 * measured thresholds (the eager limit, which mechanism serves which
 * message sizes) that replace the built-in defaults on this machine.
 *
 * Format (one setting per line, UTF-8/ASCII text):
 *
 *     # comment; blank lines are ignored
 *     eager_max   = 16256     # bytes, suffixes k/M/G (KiB/MiB/GiB) allowed
 *     fastbox_max = 512
 *     cell_size   = 16K
 *     shmbuf_size = 64K
 *     split_min   = 64K       # cma receives from here are a shared copy
 *                             # (both processes copy pieces); 0: never
 *     xfer.0      = shmbuf    # from 0 bytes up: mechanism by name
 *     xfer.1M     = cma       # from 1 MiB up (overrides the rule below it)
 *     proto       = pushpull  # above the eager limit: auto, pushpull,
 *                             # pushzero or pushall (FERRY_PROTO)
 *     btp         = 16K       # Push-Pull: bytes pushed (FERRY_BTP)
 *     btp1        = 0         # of btp, bytes in the first packet; <= btp
 *     recv_write  = 1         # receiver-initiated write: 0 or 1
 *     recv_write_min = 64K    # smallest receive offered for it
 *     coll_cma_min = 64K      # broadcasts over shared memory read the
 *                             # root's buffer from here (single copy)
 *     coll_slice_min = 2K     # reductions over shared memory combine a
 *                             # slice per member from here (whole below)
 *     coll_direct_min = 256K  # reductions among more than two ranks read
 *                             # the members' buffers from here (no cells)
 *
 * Every key is optional and may appear once. A message of n bytes uses the
 * rule with the largest min_bytes <= n. Mechanism names are checked for
 * shape only here (util sits below xfer); the caller maps them to the
 * registry and decides what an unknown name means. */
#ifndef FY_TUNING_H
#define FY_TUNING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FY_TUNING_MAX_RULES 32 /* xfer.* lines per file */
#define FY_TUNING_NAME_MAX 16  /* mechanism name incl. the NUL */
#define FY_TUNING_LINE_MAX 512 /* longest accepted line, newline excluded */

/* Limits, the same as the FERRY_* variables of the same meaning. */
#define FY_TUNING_CELL_MIN 1024u
#define FY_TUNING_CELL_MAX (1u << 20)
#define FY_TUNING_CELL_HDR 128u /* a cell's header; eager_max <= cell - hdr */
#define FY_TUNING_FASTBOX_MAX 1784u /* FY_FBOX_MAX_LEN(FY_FBOX_SLOTS) */
#define FY_TUNING_SHMBUF_MIN 4096u
#define FY_TUNING_SHMBUF_MAX (16u << 20)
#define FY_TUNING_XFER_MAX_BYTES (1ull << 48) /* largest min_bytes */
#define FY_TUNING_BTP_MAX (1ull << 30)        /* largest btp and btp1 */
#define FY_TUNING_PROTO_MAX 12                /* protocol name incl. the NUL */

/* The protocol names proto accepts, as FERRY_PROTO spells them. */
extern const char *const fy_tuning_protos[4];

struct fy_tuning_rule {
    uint64_t min_bytes;            /* rule applies from this size up */
    char mech[FY_TUNING_NAME_MAX]; /* mechanism name, [a-z0-9_-]+ */
};

struct fy_tuning {
    /* has_*: the file set it (otherwise the value is 0 and meaningless). */
    bool has_eager_max, has_fastbox_max, has_cell_size, has_shmbuf_size,
        has_split_min;
    bool has_proto, has_btp, has_btp1, has_recv_write, has_recv_write_min;
    bool has_coll_cma_min, has_coll_slice_min, has_coll_direct_min;
    uint64_t eager_max;
    uint64_t fastbox_max;
    uint64_t cell_size;
    uint64_t shmbuf_size;
    uint64_t split_min;              /* 0: the shared single copy is off */
    char proto[FY_TUNING_PROTO_MAX]; /* one of fy_tuning_protos */
    uint64_t btp, btp1;              /* Push-Pull's pushed bytes, first part */
    uint64_t recv_write;             /* 0 or 1 */
    uint64_t recv_write_min;
    uint64_t coll_cma_min;    /* FERRY_COLL_CMA_MIN */
    uint64_t coll_slice_min;  /* FERRY_COLL_SLICE_MIN */
    uint64_t coll_direct_min; /* FERRY_COLL_DIRECT_MIN */
    int nrules;               /* sorted by min_bytes */
    struct fy_tuning_rule rules[FY_TUNING_MAX_RULES];
};

/* Read and check a tuning file. Returns 0 and fills *out, -ENOENT when the
 * file does not exist (not an error: built-in defaults apply), or -EINVAL
 * (bad content; the error names file:line and is logged with FY_ERROR), or
 * another negative errno when the file exists but cannot be read. *out is
 * written only on success. Thread-safe (no shared state). */
int fy_tuning_load(const char *path, struct fy_tuning *out);

/* Same, but instead of logging, writes the message ("file:line: what") to
 * err (may be NULL) on any failure but -ENOENT. */
int fy_tuning_load_msg(const char *path, struct fy_tuning *out, char *err,
                       size_t errlen);

/* Parse an in-memory text as if it were the file 'name' (for tests and
 * tools). Same return values as fy_tuning_load_msg, -ENOENT excepted. */
int fy_tuning_parse(const char *name, const char *text, struct fy_tuning *out,
                    char *err, size_t errlen);

/* Where the tuning file lives: $FERRY_TUNING if set and not empty, else
 * ${XDG_CONFIG_HOME:-$HOME/.config}/ferry/tuning.conf. Writes the path to
 * buf and returns 0, -ENOENT if neither FERRY_TUNING, XDG_CONFIG_HOME nor
 * HOME is set, or -ENAMETOOLONG. */
int fy_tuning_default_path(char *buf, size_t len);

/* The rule for a message of n bytes, or NULL if no rule covers n. */
const struct fy_tuning_rule *fy_tuning_rule_for(const struct fy_tuning *t,
                                                uint64_t n);

/* Write t to path in the format above (atomically: a temporary file in the
 * same directory, then rename), after 'header' as comment lines (may be
 * NULL; each line of it gets "# "). Creates missing parent directories.
 * Returns 0 or a negative errno. */
int fy_tuning_save(const char *path, const struct fy_tuning *t,
                   const char *header);

#endif /* FY_TUNING_H */
