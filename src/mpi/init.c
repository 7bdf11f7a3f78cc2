/* SPDX-License-Identifier: MIT */
/* MPI_Init/Finalize and the environment queries. Initialisation order:
 * environment table, bootstrap, datatypes, transports, communicators. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "boot/boot.h"
#include "coll/coll.h"
#include "coll/shm.h"
#include "mpi/mpi_impl.h"
#include "mpi/request.h"
#include "proto/proto.h"
#include "rma/rma.h"
#include "shm/shm.h"
#include "util/copy.h"

int fy_mpi_state;
static int thread_level = MPI_THREAD_SINGLE; /* what Init/Init_thread gave */
static pthread_t s_main_thread; /* the thread that called MPI_Init */

/* Who holds the core (the world model and open sessions, see session.c):
 * s_world is 0 before MPI_Init, 1 between MPI_Init and MPI_Finalize, 2
 * after; s_sessions counts open sessions. fy_mpi_state says whether the
 * core is up (1) or was taken down (2). */
static int s_world;
static int s_sessions;

static void core_down(void);

/* When the launcher may not end the job on an abort (fy_boot.
 * abort_ends_node), end this node's other ranks ourselves: SIGKILL by the
 * pids the segment recorded, as Ferry's mpiexec would. Other nodes need
 * the launcher (srun -K). */
static void end_node(void)
{
    if (!fy_boot.abort_ends_node || !fy_shm.pid)
        return;
    for (int l = 0; l < fy_boot.local_size; l++)
        if (l != fy_boot.local_rank && fy_shm.pid[l] > 0)
            kill(fy_shm.pid[l], SIGKILL);
}

/* A rank that leaves after MPI_Init without MPI_Finalize would leave its
 * peers waiting forever: fail loudly instead, so mpiexec ends the job. The
 * job's status is the one the program gave exit() (1 for exit(0), which
 * must not look like success). A program that used sessions only and
 * closed them all leaves normally: the core goes down here, waiting for
 * the node's other ranks as MPI_Finalize would. */
static void exit_without_finalize(int status, void *arg)
{
    (void)arg;
    if (fy_mpi_state != 1)
        return;
    if (s_world == 1 || s_sessions > 0) {
        fflush(stdout);
        fprintf(stderr,
                "Ferry: rank %d exited with status %d without calling "
                "%s; ending the job\n",
                fy_log_rank < 0 ? 0 : fy_log_rank, status,
                s_world == 1 ? "MPI_Finalize" : "MPI_Session_finalize");
        /* Under PMI the launcher ends the job with this status (Slurm
         * would otherwise wait for the other ranks). */
        fy_boot_abort(status ? status : 1, "exit without MPI_Finalize");
        end_node();
        _exit(status ? status : 1);
    }
    if (status == 0)
        core_down();
}

/* Bring the core up (once per process). */
static int core_up(const char *fn)
{
    const char *step = "the FERRY_* environment";
    int rc = fy_env_load();
    if (!rc) {
        step = "copies";
        rc = fy_copy_init();
    }
    if (!rc) {
        step = "bootstrap";
        rc = fy_boot_init();
    }
    if (!rc) {
        step = "datatypes";
        rc = fy_dtype_init();
    }
    if (!rc) {
        step = "transports (shared memory, network)";
        rc = fy_p2p_init(fy_coll_shm_declare);
    }
    if (!rc) {
        step = "collectives";
        rc = fy_coll_shm_init();
    }
    if (!rc) {
        step = "communicators";
        rc = fy_comm_init(fy_boot.rank, fy_boot.size);
    }
    if (rc) {
        /* No communicator exists yet, so no handler: MPI_ERRORS_ARE_FATAL
         * is the default anyway. */
        fy_fatal(1, "%s failed while setting up %s: %s", fn, step,
                 strerror(-rc));
    }
    fy_mpi_state = 1;
    s_main_thread = pthread_self();
    on_exit(exit_without_finalize, NULL);
    return MPI_SUCCESS;
}

/* The world model: MPI_Init and MPI_Init_thread. */
static int init_common(const char *fn)
{
    if (s_world != 0 || fy_mpi_state == 2) {
        fprintf(stderr, "Ferry: %s: MPI is already %s (MPI_ERR_OTHER)\n", fn,
                s_world == 1 ? "initialized" : "finalized");
        return MPI_ERR_OTHER;
    }
    if (fy_mpi_state == 0) {
        int rc = core_up(fn);
        if (rc)
            return rc;
    }
    __atomic_store_n(&s_world, 1, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}

int fy_mpi_core_hold(const char *fn)
{
    if (fy_mpi_state == 2)
        return MPI_ERR_OTHER;
    if (fy_mpi_state == 0) {
        int rc = core_up(fn);
        if (rc)
            return rc;
    }
    s_sessions++;
    return MPI_SUCCESS;
}

void fy_mpi_core_release(void)
{
    /* The core stays up for later sessions; MPI_Finalize or the exit hook
     * takes it down. */
    if (s_sessions > 0)
        s_sessions--;
}

int fy_mpi_thread_level_max(void)
{
    return MPI_THREAD_MULTIPLE;
}

void fy_mpi_thread_level_use(int level)
{
    /* MULTIPLE turns the library lock on (util/mt.h) for the rest of the
     * process: the calling thread is the only one in MPI at this point. */
    if (level == MPI_THREAD_MULTIPLE)
        fy_mt_start();
}

FY_API int PMPI_Init(int *argc, char ***argv)
{
    FY_MT_ENTER();
    (void)argc;
    (void)argv;
    return init_common("MPI_Init");
}
FY_ALIAS(MPI_Init)

FY_API int PMPI_Init_thread(int *argc, char ***argv, int required,
                            int *provided)
{
    FY_MT_ENTER();
    (void)argc;
    (void)argv;
    if (!provided)
        return fy_mpi_err(NULL, MPI_ERR_ARG, __func__, "provided is NULL");
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        return fy_mpi_err(NULL, MPI_ERR_ARG, __func__,
                          "required level %d is not a thread level", required);
    int rc = init_common("MPI_Init_thread");
    int most = fy_mpi_thread_level_max();
    thread_level = required < most ? required : most;
    fy_mpi_thread_level_use(thread_level);
    *provided = thread_level;
    return rc;
}
FY_ALIAS(MPI_Init_thread)

FY_API int PMPI_Query_thread(int *provided)
{
    FY_MT_NONE();
    FY_CHECK_INIT(__func__);
    FY_CHECK(provided, NULL, MPI_ERR_ARG, __func__, "provided is NULL");
    *provided = thread_level;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Query_thread)

FY_API int PMPI_Is_thread_main(int *flag)
{
    FY_MT_NONE();
    FY_CHECK_INIT(__func__);
    FY_CHECK(flag, NULL, MPI_ERR_ARG, __func__, "flag is NULL");
    *flag = pthread_equal(pthread_self(), s_main_thread) != 0;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Is_thread_main)

FY_API int PMPI_Initialized(int *flag)
{
    FY_MT_NONE();
    FY_CHECK(flag, NULL, MPI_ERR_ARG, __func__, "flag is NULL");
    /* the world model only (MPI 4.0 11.2.1); any thread may ask at any
     * time, with no lock: an atomic load (pairs with the release stores
     * in init_common and MPI_Finalize). */
    *flag = __atomic_load_n(&s_world, __ATOMIC_ACQUIRE) != 0;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Initialized)

FY_API int PMPI_Finalized(int *flag)
{
    FY_MT_NONE();
    FY_CHECK(flag, NULL, MPI_ERR_ARG, __func__, "flag is NULL");
    *flag = __atomic_load_n(&s_world, __ATOMIC_ACQUIRE) == 2;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Finalized)

/* The job-wide sum of counter 'name' ("ferry_" left out), or -1 when the
 * table has no such counter. */
static long long job_sum(const struct fy_pvar *t, const uint64_t *sum, int n,
                         const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(t[i].name + 6, name)) /* past "ferry_" */
            return (long long)sum[i];
    return -1;
}

/* FERRY_STATS=1: rank 0 prints every counter of fy_proto_pvars() summed
 * over MPI_COMM_WORLD, in the shape of the per-rank lines p2p prints
 * later: "ferry-stats job proto=<name> msgs=<n> bytes=<n>" per protocol,
 * "... job xfer=<name> ..." per mechanism that moved something, then
 * "ferry-stats job <counter>=<n>" for each other counter. One reduction
 * of a snapshot; on one node it runs through the shared-memory
 * collectives, which no counter counts, so the sums equal the sums of
 * the per-rank lines (with FERRY_COLL=p2p the per-rank lines also count
 * the reduction's own messages). */
static void stats_job_summary(void)
{
    /* Static: nothing to allocate (and fail on one rank alone) in the
     * middle of a collective. The table has a few dozen counters. */
    static uint64_t mine[512], sum[512];
    if (!fy_env_int(FY_ENV_STATS))
        return;
    struct fy_comm *w = fy_comm_get(MPI_COMM_WORLD);
    const struct fy_pvar *t;
    int n = fy_proto_pvars(&t);
    if (n > (int)FY_ARRAY_LEN(mine))
        n = (int)FY_ARRAY_LEN(mine); /* the same on every rank */
    for (int i = 0; i < n; i++)
        mine[i] = *t[i].value;
    int rc = fy_coll_reduce(mine, sum, n, fy_dtype_get(MPI_UNSIGNED_LONG_LONG),
                            fy_op_get(MPI_SUM), 0, w, NULL);
    if (rc == 0 && w->rank == 0) {
        char key[64];
        fprintf(stderr, "ferry-stats job ranks=%d\n", w->size);
        for (int p = 0; p < FY_STAT_COUNT; p++) {
            const char *name = fy_proto_stat_name(p);
            snprintf(key, sizeof(key), "%s_msgs", name);
            long long m = job_sum(t, sum, n, key);
            snprintf(key, sizeof(key), "%s_bytes", name);
            long long b = job_sum(t, sum, n, key);
            if (m >= 0 && b >= 0)
                fprintf(stderr,
                        "ferry-stats job proto=%s msgs=%lld bytes=%lld\n", name,
                        m, b);
        }
        for (int k = 0; k < FY_XFER_NKINDS; k++) {
            const char *name = fy_xfer_registry[k]->name;
            snprintf(key, sizeof(key), "xfer_%s_msgs", name);
            long long m = job_sum(t, sum, n, key);
            snprintf(key, sizeof(key), "xfer_%s_bytes", name);
            long long b = job_sum(t, sum, n, key);
            if (m > 0 && b >= 0)
                fprintf(stderr,
                        "ferry-stats job xfer=%s msgs=%lld bytes=%lld\n", name,
                        m, b);
        }
        /* The rest, whatever new counters the table has grown. */
        for (int i = 0; i < n; i++) {
            const char *name = t[i].name + 6;
            bool grouped = !strncmp(name, "xfer_", 5);
            for (int p = 0; p < FY_STAT_COUNT && !grouped; p++) {
                size_t l = strlen(fy_proto_stat_name(p));
                grouped =
                    !strncmp(name, fy_proto_stat_name(p), l) &&
                    (!strcmp(name + l, "_msgs") || !strcmp(name + l, "_bytes"));
            }
            if (!grouped)
                fprintf(stderr, "ferry-stats job %s=%llu\n", name,
                        (unsigned long long)sum[i]);
        }
    }
}

/* Take the core down: every rank of the node waits for the others. */
static void core_down(void)
{
    fy_rma_thread_stop(); /* before anything it could progress goes */
    fy_mpi_requests_finalize(__atomic_load_n(&s_world, __ATOMIC_ACQUIRE) == 2);
    fy_rma_finalize(); /* windows the program did not free */
    /* MPI_COMM_SELF's attribute callbacks run first, and may communicate;
     * then the job's counters are complete. */
    fy_comm_finalize_attrs();
    stats_job_summary();
    fy_comm_finalize();
    fy_coll_shm_finalize();
    fy_coll_caches_drain();
    fy_mpi_coll_finalize();
    fy_p2p_finalize();
    fy_boot_finalize();
    fy_dtype_finalize();
    fy_mpi_state = 2;
    fflush(stdout);
}

FY_API int PMPI_Finalize(void)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    if (s_world != 1)
        return fy_mpi_err(NULL, MPI_ERR_OTHER, __func__,
                          "MPI_Init was not called (the world model is not "
                          "initialized)");
    /* MPI_COMM_SELF's attributes go first, before any other part of MPI is
     * affected: their delete callbacks may communicate, and MPI_Finalized
     * returns false inside them (MPI 4.0, 11.2.2). */
    fy_comm_finalize_attrs();
    __atomic_store_n(&s_world, 2, __ATOMIC_RELEASE);
    /* Open sessions keep the core; the exit hook takes it down after
     * their MPI_Session_finalize. */
    if (s_sessions == 0)
        core_down();
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Finalize)

FY_API int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    (void)comm;
    fflush(stdout);
    fprintf(stderr, "Ferry: rank %d called MPI_Abort with error code %d\n",
            fy_log_rank < 0 ? 0 : fy_log_rank, errorcode);
    /* Exit statuses are 8 bits; 0 would hide the abort. */
    int code = errorcode & 0xff;
    fy_boot_abort(code ? code : 1, "MPI_Abort");
    end_node();
    _exit(code ? code : 1);
}
FY_ALIAS(MPI_Abort)

FY_API int PMPI_Get_version(int *version, int *subversion)
{
    FY_MT_NONE();
    FY_CHECK(version && subversion, NULL, MPI_ERR_ARG, __func__,
             "version or subversion is NULL");
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Get_version)

FY_API int PMPI_Get_library_version(char *version, int *resultlen)
{
    FY_MT_NONE();
    FY_CHECK(version && resultlen, NULL, MPI_ERR_ARG, __func__,
             "version or resultlen is NULL");
    int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                     "Ferry %s (MPICH ABI, MPI %d.%d; dynamic processes "
                     "defined but refused)",
                     FERRY_VERSION_STRING, MPI_VERSION, MPI_SUBVERSION);
    *resultlen = n < MPI_MAX_LIBRARY_VERSION_STRING
                     ? n
                     : MPI_MAX_LIBRARY_VERSION_STRING - 1;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Get_library_version)

FY_API int PMPI_Get_processor_name(char *name, int *resultlen)
{
    FY_MT_ENTER();
    FY_CHECK(name && resultlen, NULL, MPI_ERR_ARG, __func__,
             "name or resultlen is NULL");
    if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0)
        snprintf(name, MPI_MAX_PROCESSOR_NAME, "localhost");
    name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Get_processor_name)

FY_API double PMPI_Wtime(void)
{
    FY_MT_NONE();
    return fy_wtime();
}
FY_ALIAS(MPI_Wtime)

FY_API double PMPI_Wtick(void)
{
    FY_MT_NONE();
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
FY_ALIAS(MPI_Wtick)

/* Profiling control: Ferry's own profiling interface does nothing with
 * it, so any level is accepted (MPI 15.2.1). */
FY_API int PMPI_Pcontrol(const int level, ...)
{
    FY_MT_NONE();
    (void)level;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Pcontrol)
