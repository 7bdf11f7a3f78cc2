/* SPDX-License-Identifier: MIT */
/* Thresholds in force: a FERRY_* variable set by the user wins, then the
 * tuning file written by ferry-bench --tune, then the built-in default.
 * The library and ferry-info both ask here, so what ferry-info prints is
 * what the library uses. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/tuned.h"

static struct fy_tuning tuning;
static bool loaded, have;
static char tpath[4096];

int fy_tuned_load(void)
{
    if (loaded)
        return 0;
    loaded = true;
    char err[512];
    bool named = *fy_env_str(FY_ENV_TUNING) != '\0';
    if (fy_tuning_default_path(tpath, sizeof(tpath)) != 0)
        return 0;
    int rc = fy_tuning_load_msg(tpath, &tuning, err, sizeof(err));
    if (rc == -ENOENT && !named)
        return 0;
    if (rc) {
        if (named) {
            FY_ERROR("FERRY_TUNING=%s: %s", tpath,
                     rc == -ENOENT ? "no such file" : err);
            return rc;
        }
        FY_WARN("ignoring the tuning file: %s", err);
        return 0;
    }
    have = true;
    FY_INFO("tuning file %s loaded", tpath);
    return 0;
}

const struct fy_tuning *fy_tuned_file(const char **path_out)
{
    if (path_out)
        *path_out = have ? tpath : NULL;
    return have ? &tuning : NULL;
}

long long fy_tuned_value(enum fy_env_id id, const char **source_out)
{
    bool has = false;
    uint64_t v = 0;
    switch (id) {
    case FY_ENV_EAGER_MAX:
        has = tuning.has_eager_max;
        v = tuning.eager_max;
        break;
    case FY_ENV_FASTBOX_MAX:
        has = tuning.has_fastbox_max;
        v = tuning.fastbox_max;
        break;
    case FY_ENV_CELL_SIZE:
        has = tuning.has_cell_size;
        v = tuning.cell_size;
        break;
    case FY_ENV_SHMBUF_SIZE:
        has = tuning.has_shmbuf_size;
        v = tuning.shmbuf_size;
        break;
    case FY_ENV_SPLIT_MIN:
        has = tuning.has_split_min;
        v = tuning.split_min;
        break;
    case FY_ENV_BTP:
        has = tuning.has_btp;
        v = tuning.btp;
        break;
    case FY_ENV_BTP1:
        has = tuning.has_btp1;
        v = tuning.btp1;
        break;
    case FY_ENV_RECV_WRITE:
        has = tuning.has_recv_write;
        v = tuning.recv_write;
        break;
    case FY_ENV_RECV_WRITE_MIN:
        has = tuning.has_recv_write_min;
        v = tuning.recv_write_min;
        break;
    case FY_ENV_COLL_CMA_MIN:
        has = tuning.has_coll_cma_min;
        v = tuning.coll_cma_min;
        break;
    case FY_ENV_COLL_SLICE_MIN:
        has = tuning.has_coll_slice_min;
        v = tuning.coll_slice_min;
        break;
    case FY_ENV_COLL_DIRECT_MIN:
        has = tuning.has_coll_direct_min;
        v = tuning.coll_direct_min;
        break;
    default:
        break;
    }
    const char *src = "default";
    long long out = fy_env_int(id);
    if (fy_env[id].from_env) {
        src = "environment";
    } else if (have && has) {
        src = "tuning file";
        out = (long long)v;
    }
    if (source_out)
        *source_out = src;
    return out;
}

const char *fy_tuned_str(enum fy_env_id id, const char **source_out)
{
    if (fy_env[id].type != FY_ENV_STRING) {
        if (source_out)
            *source_out = NULL;
        return NULL; /* a number: fy_tuned_value */
    }
    const char *src = "default";
    const char *out = fy_env_str(id);
    if (fy_env[id].from_env) {
        src = "environment";
    } else if (have && id == FY_ENV_PROTO && tuning.has_proto) {
        src = "tuning file";
        out = tuning.proto;
    }
    if (source_out)
        *source_out = src;
    return out;
}
