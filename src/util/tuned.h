/* SPDX-License-Identifier: MIT */
/* Thresholds in force after FERRY_* variables and the tuning file. */
#ifndef FY_TUNED_H
#define FY_TUNED_H

#include "util/tuning.h"
#include "util/util.h"

/* Load the tuning file once (FERRY_TUNING, else the default path, where a
 * missing file is fine). Returns 0, or a negative errno when the file named
 * by FERRY_TUNING is missing or malformed (logged). Needs fy_env_load(). */
int fy_tuned_load(void);
/* The loaded file (NULL if none) and its path. */
const struct fy_tuning *fy_tuned_file(const char **path_out);
/* A threshold's value in force and where it came from ("environment",
 * "tuning file" or "default"). */
long long fy_tuned_value(enum fy_env_id id, const char **source_out);
/* The same for a string setting (FY_ENV_PROTO: "auto", "pushpull",
 * "pushzero" or "pushall" from the tuning file; the environment's text as
 * given, unchecked). The string lives as long as the process. NULL (and
 * *source_out NULL) if id is not a string setting. */
const char *fy_tuned_str(enum fy_env_id id, const char **source_out);

#endif /* FY_TUNED_H */
