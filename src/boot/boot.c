/* SPDX-License-Identifier: MIT */
/* The bootstrap registry (FERRY_BOOT picks one, else the first whose
 * launcher variables are present) and two ways of starting: Ferry's own
 * launcher (tools/mpiexec.c: rank, size and two inherited memfds, the
 * segment and the key-value table, in the environment) and a singleton
 * (started without any launcher). PMI-1/PMI-2 are in pmi.c, PMIx in
 * pmix.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "boot/boot.h"
#include "util/util.h"

struct fy_boot fy_boot = {.shm_fd = -1};

static int env_int(const char *name, long lo, long hi, int *out)
{
    const char *s = getenv(name);
    if (!s)
        return -ENOENT;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi) {
        FY_ERROR("%s='%s' is invalid (expected an integer in [%ld, %ld]); "
                 "was this program started by Ferry's mpiexec?",
                 name, s, lo, hi);
        return -EINVAL;
    }
    *out = (int)v;
    return 0;
}

/* Fill local_of[] (world -> local, -1 off this node) from local_ranks[]
 * and check that the launcher's node map is a set of distinct world ranks
 * that includes this one. */
int fy_boot_index_local(struct fy_boot *b)
{
    b->local_of = malloc((size_t)b->size * sizeof(*b->local_of));
    if (!b->local_of)
        return -ENOMEM;
    for (int i = 0; i < b->size; i++)
        b->local_of[i] = -1;
    for (int l = 0; l < b->local_size; l++) {
        int w = b->local_ranks[l];
        if (w < 0 || w >= b->size || b->local_of[w] >= 0) {
            FY_ERROR("launcher's node map is malformed (local rank %d is "
                     "world rank %d of %d)",
                     l, w, b->size);
            return -EINVAL;
        }
        b->local_of[w] = l;
    }
    if (b->local_of[b->rank] < 0 || b->local_of[b->rank] != b->local_rank) {
        FY_ERROR("launcher's node map does not hold this rank (%d)", b->rank);
        return -EINVAL;
    }
    return 0;
}

/* Every rank on one node: local ranks are world ranks. */
int fy_boot_one_node(struct fy_boot *b)
{
    b->local_ranks = malloc((size_t)b->size * sizeof(*b->local_ranks));
    if (!b->local_ranks)
        return -ENOMEM;
    for (int i = 0; i < b->size; i++)
        b->local_ranks[i] = i;
    b->local_rank = b->rank;
    b->local_size = b->size;
    b->nodes = 1;
    b->node = 0;
    return fy_boot_index_local(b);
}

/* FERRY_NODES: our block of ranks is our node (mpiexec gave each block
 * its own segment); the CPUs are shared by all nodes, so each counts its
 * share of them when it decides whether its ranks may spin. */
static int virtual_nodes(struct fy_boot *b, int nodes)
{
    b->nodes = nodes;
    b->node = fy_boot_block_node(b->rank, b->size, nodes);
    b->virtual_nodes = true;
    b->local_ranks = malloc((size_t)b->size * sizeof(*b->local_ranks));
    if (!b->local_ranks)
        return -ENOMEM;
    b->local_size = 0;
    for (int r = 0; r < b->size; r++) {
        if (fy_boot_block_node(r, b->size, nodes) != b->node)
            continue;
        if (r == b->rank)
            b->local_rank = b->local_size;
        b->local_ranks[b->local_size++] = r;
    }
    b->ncpus = FY_MAX(1, b->ncpus * b->local_size / b->size);
    return fy_boot_index_local(b);
}

/* ---- Ferry's own launcher ------------------------------------------------ */

static const char *const embedded_vars[] = {"FERRY_RANK",   "FERRY_SIZE",
                                            "FERRY_SHM_FD", "FERRY_NCPUS",
                                            "FERRY_JOBID",  "FERRY_KVS_FD"};

/* An inherited descriptor named by 'var': checked open, close-on-exec. */
static int inherited_fd(const char *var, int *fd_out)
{
    int rc = env_int(var, 0, INT_MAX, fd_out);
    if (rc)
        return rc == -ENOENT ? (FY_ERROR("%s is not set", var), -EINVAL) : rc;
    if (fcntl(*fd_out, F_GETFD) < 0) {
        FY_ERROR("%s=%d is not an open descriptor: %m", var, *fd_out);
        return -EBADF;
    }
    /* Keep it from leaking into programs the rank may exec. */
    fcntl(*fd_out, F_SETFD, FD_CLOEXEC);
    return 0;
}

static bool embedded_detect(void)
{
    return getenv("FERRY_SIZE") != NULL;
}

static int embedded_init(struct fy_boot *b)
{
    int rc = env_int("FERRY_SIZE", 1, 1 << 20, &b->size);
    if (rc)
        return rc;
    if ((rc = env_int("FERRY_RANK", 0, b->size - 1, &b->rank)))
        return rc == -ENOENT
                   ? (FY_ERROR("FERRY_SIZE is set but FERRY_RANK is not"),
                      -EINVAL)
                   : rc;
    fy_log_rank = b->rank;
    int kvs_fd;
    if ((rc = inherited_fd("FERRY_SHM_FD", &b->shm_fd)) ||
        (rc = inherited_fd("FERRY_KVS_FD", &kvs_fd)) ||
        (rc = fy_boot_kvs_attach(kvs_fd, b->rank, b->size)))
        return rc;
    if (env_int("FERRY_NCPUS", 1, 1 << 20, &b->ncpus))
        b->ncpus = fy_online_cpus();
    const char *job = getenv("FERRY_JOBID");
    snprintf(b->jobid, sizeof(b->jobid), "%s", job ? job : "?");
    long long nodes = fy_env_int(FY_ENV_NODES);
    if (nodes < 1 || nodes > b->size) {
        FY_ERROR("FERRY_NODES=%lld must be an integer from 1 to the number "
                 "of ranks (%d)",
                 nodes, b->size);
        return -EINVAL;
    }
    return nodes > 1 ? virtual_nodes(b, (int)nodes) : fy_boot_one_node(b);
}

const struct fy_boot_ops fy_boot_embedded_ops = {
    .name = "ferry",
    .detect = embedded_detect,
    .init = embedded_init,
    .kvs_put = fy_boot_kvs_put,
    .kvs_get = fy_boot_kvs_get,
    .fence = fy_boot_kvs_fence,
    .finalize = fy_boot_kvs_detach,
};

/* ---- singleton ------------------------------------------------------------
 */

static bool singleton_detect(void)
{
    return true;
}

/* A private memfd for the singleton's segment or table. */
static int private_memfd(const char *name, int *fd_out)
{
    *fd_out = memfd_create(name, MFD_CLOEXEC);
    if (*fd_out < 0) {
        int err = errno;
        FY_ERROR("memfd_create failed: %m");
        return -err;
    }
    return 0;
}

static int singleton_init(struct fy_boot *b)
{
    /* Our own segment, for uniformity of the code paths. */
    b->singleton = true;
    b->rank = 0;
    b->size = 1;
    b->ncpus = fy_online_cpus();
    snprintf(b->jobid, sizeof(b->jobid), "singleton-%d", getpid());
    fy_log_rank = 0;
    int kvs_fd, rc;
    if ((rc = private_memfd("ferry-singleton", &b->shm_fd)) ||
        (rc = private_memfd("ferry-singleton-kvs", &kvs_fd)) ||
        (rc = fy_boot_kvs_attach(kvs_fd, 0, 1)))
        return rc;
    return fy_boot_one_node(b);
}

const struct fy_boot_ops fy_boot_singleton_ops = {
    .name = "singleton",
    .detect = singleton_detect,
    .init = singleton_init,
    .kvs_put = fy_boot_kvs_put,
    .kvs_get = fy_boot_kvs_get,
    .fence = fy_boot_kvs_fence,
    .finalize = fy_boot_kvs_detach,
};

/* ---- the registry ------------------------------------------------------- */

/* In the order they are tried; the singleton comes last and always fits.
 * Slurm's PMI-2 before PMI-1: srun --mpi=pmi2 sets PMI_FD as Hydra does. */
static const struct fy_boot_ops *const boot_registry[] = {
    &fy_boot_embedded_ops, &fy_boot_pmi2_ops,      &fy_boot_pmi1_ops,
    &fy_boot_pmix_ops,     &fy_boot_singleton_ops,
};
#define BOOT_COUNT (sizeof(boot_registry) / sizeof(boot_registry[0]))

/* Variables of launchers Ferry has no client for, with the size they
 * claim: a job of more than one rank started by one of them must fail
 * clearly rather than run as N singletons that all believe they are rank 0
 * of 1. Checked when nothing else was detected. */
static const struct {
    const char *size_var, *what;
} foreign[] = {
    {"PMI_SIZE", "a PMI launcher that gave neither PMI_FD nor PMI_PORT"},
    {"PMIX_SIZE", "a PMIx launcher"},
    {"OMPI_COMM_WORLD_SIZE", "Open MPI's mpirun (without PMIx)"},
    {"SLURM_NTASKS", "Slurm's srun without PMI (use srun --mpi=pmi2)"},
};

static int foreign_launcher_check(void)
{
    for (size_t i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++) {
        const char *v = getenv(foreign[i].size_var);
        if (v && strtol(v, NULL, 10) > 1) {
            FY_ERROR("this program was started by %s (%s=%s), which Ferry "
                     "cannot talk to; start it with Ferry's mpiexec "
                     "(build/bin/mpiexec -n N prog), mpiexec.hydra or "
                     "srun --mpi=pmi2 instead of running %s unconnected "
                     "copies",
                     foreign[i].what, foreign[i].size_var, v, v);
            return -ENOTSUP;
        }
    }
    return 0;
}

/* Launcher variables a program this rank starts (system(), fork+exec)
 * must not see: it is not a rank, and must not find our bootstrap. */
static const char *const launcher_vars[] = {
    "PMI_FD",
    "PMI_PORT",
    "PMI_ID",
    "PMI_RANK",
    "PMI_SIZE",
    "PMI_JOBID",
    "PMIX_RANK",
    "PMIX_NAMESPACE",
    "PMIX_SERVER_URI2",
    "PMIX_SERVER_URI21",
    "PMIX_SERVER_URI3",
    "PMIX_SERVER_URI4",
    "PMIX_SERVER_URI41",
};

/* FERRY_BOOT: "auto" or the name of one entry of the registry. */
static int pick_boot(const struct fy_boot_ops **out)
{
    const char *want = fy_env_str(FY_ENV_BOOT);
    for (size_t i = 0; i < BOOT_COUNT; i++) {
        bool hit = strcmp(want, "auto") ? !strcmp(want, boot_registry[i]->name)
                                        : boot_registry[i]->detect();
        if (hit) {
            *out = boot_registry[i];
            return 0;
        }
    }
    FY_ERROR("FERRY_BOOT='%s' is not one of auto, ferry, pmi2, pmi1, pmix, "
             "singleton",
             want);
    return -EINVAL;
}

int fy_boot_init(void)
{
    const struct fy_boot_ops *ops = NULL;
    int rc = pick_boot(&ops);
    if (!rc && ops == &fy_boot_singleton_ops &&
        !strcmp(fy_env_str(FY_ENV_BOOT), "auto"))
        rc = foreign_launcher_check();
    if (!rc) {
        fy_boot.ops = ops; /* abort() may be needed from here on */
        rc = ops->init(&fy_boot);
    }
    if (rc) {
        fy_boot.ops = NULL;
        return rc;
    }
    FY_DEBUG("bootstrap %s: rank %d of %d, local %d of %d", ops->name,
             fy_boot.rank, fy_boot.size, fy_boot.local_rank,
             fy_boot.local_size);
    for (size_t i = 0; i < sizeof(embedded_vars) / sizeof(embedded_vars[0]);
         i++)
        unsetenv(embedded_vars[i]);
    for (size_t i = 0; i < sizeof(launcher_vars) / sizeof(launcher_vars[0]);
         i++)
        unsetenv(launcher_vars[i]);
    return 0;
}

void fy_boot_abort(int code, const char *msg)
{
    if (fy_boot.ops && fy_boot.ops->abort)
        fy_boot.ops->abort(code, msg);
}

void fy_boot_finalize(void)
{
    if (fy_boot.ops && fy_boot.ops->finalize)
        fy_boot.ops->finalize();
    free(fy_boot.local_ranks);
    fy_boot.local_ranks = NULL;
    free(fy_boot.local_of);
    fy_boot.local_of = NULL;
    fy_boot.ops = NULL;
}
