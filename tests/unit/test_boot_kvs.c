/* SPDX-License-Identifier: MIT */
/* The bootstrap's one-node key-value exchange (src/boot/kvs.c): ranks are
 * forked children sharing one memfd, as under mpiexec. Each puts keys,
 * fences, and reads every rank's values back byte for byte, over many
 * rounds (4 ranks on the machine's cores, so fences really wait); then the
 * error cases and a table scribbled over by a rank. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boot/boot.h"
#include "harness.h"
#include "util/util.h"

#define NRANKS 4
#define ROUNDS 200

static void value_for(int rank, int round, int k, char *out, size_t len)
{
    /* Long values, distinct per rank, round and key. */
    int n = snprintf(out, len, "r%d-round%d-key%d-", rank, round, k);
    for (size_t i = (size_t)n; i + 1 < len && i < 300; i++)
        out[i] = (char)('a' + (i + (size_t)rank * 7 + (size_t)round) % 26);
    out[FY_MIN(len - 1, (size_t)300)] = '\0';
}

/* One rank: returns the number of mismatches (its exit status). */
static int rank_main(int rank, int fd)
{
    if (fy_boot_kvs_attach(dup(fd), rank, NRANKS))
        return 100;
    int bad = 0;
    char key[32], want[FY_BOOT_VALUE_MAX], got[FY_BOOT_VALUE_MAX];
    for (int round = 0; round < ROUNDS; round++) {
        /* Overwrite the same three keys each round: a get after the
         * fence must see this round's value, never an older one. */
        for (int k = 0; k < 3; k++) {
            snprintf(key, sizeof(key), "key%d", k);
            value_for(rank, round, k, want, sizeof(want));
            bad += fy_boot_kvs_put(key, want) != 0;
        }
        bad += fy_boot_kvs_fence() != 0;
        for (int r = 0; r < NRANKS; r++)
            for (int k = 0; k < 3; k++) {
                snprintf(key, sizeof(key), "key%d", k);
                value_for(r, round, k, want, sizeof(want));
                if (fy_boot_kvs_get(r, key, got, sizeof(got)) ||
                    strcmp(got, want))
                    bad++;
            }
        /* Nobody overwrites before everyone has read. */
        bad += fy_boot_kvs_fence() != 0;
    }
    fy_boot_kvs_detach();
    return bad > 99 ? 99 : bad;
}

int main(void)
{
    tap_plan(NRANKS + 11);
    int fd = memfd_create("test-kvs", MFD_CLOEXEC);
    if (fd < 0) {
        tap_diag("memfd_create: %s", strerror(errno));
        return 1;
    }
    pid_t pid[NRANKS];
    for (int r = 0; r < NRANKS; r++) {
        pid[r] = fork();
        if (pid[r] == 0) {
            alarm(60);
            _exit(rank_main(r, fd));
        }
    }
    for (int r = 0; r < NRANKS; r++) {
        int st = 0;
        waitpid(pid[r], &st, 0);
        TAP_OK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
               "rank %d: %d rounds of put, fence, get of every rank's "
               "values (status %d)",
               r, ROUNDS, st);
    }

    /* Errors, as rank 1 of 2 on a fresh table. */
    int fd2 = memfd_create("test-kvs2", MFD_CLOEXEC);
    TAP_EQ_INT(fy_boot_kvs_put("k", "v"), -ENOTSUP, "put before attach");
    TAP_EQ_INT(fy_boot_kvs_attach(fd2, 1, 2), 0, "attach");
    char longkey[FY_BOOT_KEY_MAX + 1];
    memset(longkey, 'k', sizeof(longkey) - 1);
    longkey[sizeof(longkey) - 1] = '\0';
    TAP_EQ_INT(fy_boot_kvs_put(longkey, "v"), -E2BIG, "key too long");
    TAP_EQ_INT(fy_boot_kvs_put("", "v"), -E2BIG, "empty key");
    char buf[8];
    TAP_EQ_INT(fy_boot_kvs_get(0, "k", buf, sizeof(buf)), -ENOENT,
               "a key nobody put");
    TAP_EQ_INT(fy_boot_kvs_get(2, "k", buf, sizeof(buf)), -EINVAL,
               "rank out of range");
    fy_boot_kvs_put("k", "0123456789");
    TAP_EQ_INT(fy_boot_kvs_get(1, "k", buf, sizeof(buf)), -ENOSPC,
               "value longer than the caller's buffer");
    int full = 0;
    for (int i = 0; i < FY_BOOT_KVS_ENTRIES + 1; i++) {
        char key[16];
        snprintf(key, sizeof(key), "f%d", i);
        full = fy_boot_kvs_put(key, "x");
    }
    TAP_EQ_INT(full, -ENOSPC, "table full after %d keys", FY_BOOT_KVS_ENTRIES);

    /* Rank 0 scribbles: a huge count and unterminated strings. The reader
     * clamps and terminates instead of running off the table. */
    size_t len = 2 * 64 + 2 * (64 + FY_BOOT_KVS_ENTRIES *
                                        (FY_BOOT_KEY_MAX + FY_BOOT_VALUE_MAX));
    uint8_t *t =
        mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, dup(fd), 0);
    (void)fd2;
    TAP_OK(t != MAP_FAILED, "map the first table again");
    if (t != MAP_FAILED) {
        /* Rank 0's record of the first (4-rank) table starts at 128. */
        memset(t + 128 + 64, 'z',
               FY_BOOT_KVS_ENTRIES * (FY_BOOT_KEY_MAX + FY_BOOT_VALUE_MAX));
        *(uint32_t *)(t + 128) = 0xffffffffu;
    }
    fy_boot_kvs_detach();
    TAP_EQ_INT(fy_boot_kvs_attach(dup(fd), 3, NRANKS), 0, "reattach");
    char big[FY_BOOT_VALUE_MAX];
    TAP_EQ_INT(fy_boot_kvs_get(0, "key0", big, sizeof(big)), -ENOENT,
               "scribbled table: clamped count, terminated strings, "
               "no match");
    fy_boot_kvs_detach();
    return tap_done();
}
