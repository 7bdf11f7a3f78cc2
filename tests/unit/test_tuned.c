/* SPDX-License-Identifier: MIT */
/* The thresholds in force (src/util/tuned.c): a tuning file's split_min
 * (the shared single copy, written by ferry-bench --tune) reaches the
 * library and ferry-info through fy_tuned_value, 0 in the file turns the
 * shared copy off, and FERRY_SPLIT_MIN still wins over the file. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "util/tuned.h"

static char dir[] = "/tmp/ferry-test-tuned-XXXXXX";

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path[256];
    snprintf(path, sizeof(path), "%s/tuning.conf", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    fputs("eager_max = 8K\nsplit_min = 80K\nxfer.0 = cma\n"
          "proto = pushzero\nbtp = 32K\nbtp1 = 1K\nrecv_write = 0\n"
          "recv_write_min = 256K\ncoll_cma_min = 128K\n"
          "coll_slice_min = 1K\ncoll_direct_min = 1M\n",
          f);
    fclose(f);

    const char *src = NULL;
    static const char *const proto_vars[] = {"FERRY_PROTO", "FERRY_BTP",
                                             "FERRY_BTP1", "FERRY_RECV_WRITE",
                                             "FERRY_RECV_WRITE_MIN"};
    for (size_t i = 0; i < FY_ARRAY_LEN(proto_vars); i++)
        unsetenv(proto_vars[i]);
    unsetenv("FERRY_SPLIT_MIN");
    unsetenv("FERRY_TUNING");
    unsetenv("FERRY_COLL_CMA_MIN");
    unsetenv("FERRY_COLL_SLICE_MIN");
    unsetenv("FERRY_COLL_DIRECT_MIN");
    TAP_EQ_INT(fy_env_load(), 0, "environment loads");
    TAP_EQ_INT(fy_tuned_value(FY_ENV_COLL_DIRECT_MIN, &src), 262144,
               "coll_direct_min before any file: the built-in 256 KiB");
    long long def = fy_tuned_value(FY_ENV_SPLIT_MIN, &src);
    TAP_OK(def > 0, "the built-in default turns the shared copy on (%lld)",
           def);
    TAP_EQ_STR(src, "default", "before any file: the default");
    TAP_EQ_STR(fy_tuned_str(FY_ENV_PROTO, &src), "auto",
               "proto before any file: auto");
    TAP_EQ_STR(src, "default", "proto's source: the default");
    TAP_EQ_INT(fy_tuned_value(FY_ENV_BTP, &src), 64,
               "btp before any file: the built-in 64 B");
    TAP_OK(fy_tuned_str(FY_ENV_BTP, &src) == NULL && src == NULL,
           "fy_tuned_str refuses a numeric setting");

    setenv("FERRY_TUNING", path, 1);
    TAP_EQ_INT(fy_env_load(), 0, "environment with FERRY_TUNING loads");
    TAP_EQ_INT(fy_tuned_load(), 0, "the tuning file loads");
    TAP_EQ_INT(fy_tuned_value(FY_ENV_SPLIT_MIN, &src), 81920,
               "split_min from the file");
    TAP_EQ_STR(src, "tuning file", "its source is the tuning file");
    TAP_EQ_INT(fy_tuned_value(FY_ENV_EAGER_MAX, NULL), 8192,
               "the file's other keys still apply");
    TAP_EQ_STR(fy_tuned_str(FY_ENV_PROTO, &src), "pushzero",
               "proto from the file");
    TAP_EQ_STR(src, "tuning file", "proto's source: the tuning file");
    TAP_EQ_INT(fy_tuned_value(FY_ENV_BTP, &src), 32768, "btp from the file");
    TAP_EQ_STR(src, "tuning file", "btp's source: the tuning file");
    TAP_EQ_INT(fy_tuned_value(FY_ENV_BTP1, NULL), 1024, "btp1 from the file");
    TAP_EQ_INT(fy_tuned_value(FY_ENV_RECV_WRITE, &src), 0,
               "recv_write = 0 from the file overrides the default 1");
    TAP_EQ_STR(src, "tuning file", "recv_write's source: the tuning file");
    TAP_EQ_INT(fy_tuned_value(FY_ENV_RECV_WRITE_MIN, NULL), 262144,
               "recv_write_min from the file");
    TAP_EQ_INT(fy_tuned_value(FY_ENV_COLL_CMA_MIN, &src), 131072,
               "coll_cma_min from the file");
    TAP_EQ_STR(src, "tuning file", "coll_cma_min's source: the tuning file");
    TAP_EQ_INT(fy_tuned_value(FY_ENV_COLL_SLICE_MIN, &src), 1024,
               "coll_slice_min from the file");
    TAP_EQ_STR(src, "tuning file", "coll_slice_min's source: the file");
    TAP_EQ_INT(fy_tuned_value(FY_ENV_COLL_DIRECT_MIN, &src), 1048576,
               "coll_direct_min from the file");
    TAP_EQ_STR(src, "tuning file", "coll_direct_min's source: the file");
    setenv("FERRY_COLL_SLICE_MIN", "3K", 1);
    TAP_EQ_INT(fy_env_load(), 0, "environment with FERRY_COLL_SLICE_MIN");
    TAP_EQ_INT(fy_tuned_value(FY_ENV_COLL_SLICE_MIN, &src), 3072,
               "FERRY_COLL_SLICE_MIN wins over the file");
    TAP_EQ_STR(src, "environment", "coll_slice_min's source: environment");
    TAP_EQ_INT(fy_tuned_value(FY_ENV_COLL_CMA_MIN, &src), 131072,
               "coll_cma_min still from the file");
    unsetenv("FERRY_COLL_SLICE_MIN");

    setenv("FERRY_PROTO", "pushall", 1);
    setenv("FERRY_BTP", "4K", 1);
    setenv("FERRY_RECV_WRITE", "1", 1);
    TAP_EQ_INT(fy_env_load(), 0, "environment with protocol settings loads");
    TAP_EQ_STR(fy_tuned_str(FY_ENV_PROTO, &src), "pushall",
               "FERRY_PROTO wins over the file");
    TAP_EQ_STR(src, "environment", "proto's source: the environment");
    TAP_EQ_INT(fy_tuned_value(FY_ENV_BTP, &src), 4096,
               "FERRY_BTP wins over the file");
    TAP_EQ_INT(fy_tuned_value(FY_ENV_RECV_WRITE, NULL), 1,
               "FERRY_RECV_WRITE wins over the file");
    TAP_EQ_INT(fy_tuned_value(FY_ENV_BTP1, &src), 1024,
               "an unset variable still comes from the file");
    TAP_EQ_STR(src, "tuning file", "btp1's source: still the file");
    for (size_t i = 0; i < FY_ARRAY_LEN(proto_vars); i++)
        unsetenv(proto_vars[i]);

    setenv("FERRY_SPLIT_MIN", "4096", 1);
    TAP_EQ_INT(fy_env_load(), 0, "environment with FERRY_SPLIT_MIN loads");
    TAP_EQ_INT(fy_tuned_value(FY_ENV_SPLIT_MIN, &src), 4096,
               "FERRY_SPLIT_MIN wins over the file");
    TAP_EQ_STR(src, "environment", "its source is the environment");
    setenv("FERRY_SPLIT_MIN", "0", 1);
    TAP_EQ_INT(fy_env_load(), 0, "FERRY_SPLIT_MIN=0 loads");
    TAP_EQ_INT(fy_tuned_value(FY_ENV_SPLIT_MIN, &src), 0,
               "FERRY_SPLIT_MIN=0 turns it off");

    unlink(path);
    rmdir(dir);
    return tap_done();
}
