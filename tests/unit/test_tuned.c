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
    fputs("eager_max = 8K\nsplit_min = 80K\nxfer.0 = cma\n", f);
    fclose(f);

    const char *src = NULL;
    unsetenv("FERRY_SPLIT_MIN");
    unsetenv("FERRY_TUNING");
    TAP_EQ_INT(fy_env_load(), 0, "environment loads");
    long long def = fy_tuned_value(FY_ENV_SPLIT_MIN, &src);
    TAP_OK(def > 0, "the built-in default turns the shared copy on (%lld)",
           def);
    TAP_EQ_STR(src, "default", "before any file: the default");

    setenv("FERRY_TUNING", path, 1);
    TAP_EQ_INT(fy_env_load(), 0, "environment with FERRY_TUNING loads");
    TAP_EQ_INT(fy_tuned_load(), 0, "the tuning file loads");
    TAP_EQ_INT(fy_tuned_value(FY_ENV_SPLIT_MIN, &src), 81920,
               "split_min from the file");
    TAP_EQ_STR(src, "tuning file", "its source is the tuning file");
    TAP_EQ_INT(fy_tuned_value(FY_ENV_EAGER_MAX, NULL), 8192,
               "the file's other keys still apply");

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
