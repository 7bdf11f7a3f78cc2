/* SPDX-License-Identifier: MIT */
/* A program a rank starts is not a rank: after MPI_Init the launcher's
 * bootstrap variables are gone from the environment, and a copy of this
 * program started with system() initialises MPI as a singleton of its own
 * (before the fix it attached to the job with a descriptor number that no
 * longer named the segment, and wrote the segment header over that file).
 * Also: with the default rule table MPI_Init leaves no idle machinery
 * behind (no loopback socket, no open /proc/<pid>/mem). */
#include <dirent.h>
#include <unistd.h>

#include "mpitest.h"

static const char *const boot_vars[] = {"FERRY_RANK",   "FERRY_SIZE",
                                        "FERRY_SHM_FD", "FERRY_NCPUS",
                                        "FERRY_JOBID",  "FERRY_KVS_FD"};

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        int size = 0;
        if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
            return 3;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        MPI_Finalize();
        return size == 1 ? 0 : 4;
    }
    mt_init(&argc, &argv);
    for (size_t i = 0; i < sizeof(boot_vars) / sizeof(boot_vars[0]); i++)
        MT_CHECK(getenv(boot_vars[i]) == NULL, "%s is still set after MPI_Init",
                 boot_vars[i]);
    int idle = 0;
    DIR *d = opendir("/proc/self/fd");
    MT_CHECK(d != NULL, "cannot list /proc/self/fd");
    for (struct dirent *e; (e = readdir(d));) {
        char p[300], t[256];
        snprintf(p, sizeof(p), "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(p, t, sizeof(t) - 1);
        if (k <= 0)
            continue;
        t[k] = '\0';
        if (!strncmp(t, "socket:", 7) || (k >= 4 && !strcmp(t + k - 4, "/mem")))
            idle++;
    }
    closedir(d);
    /* Under FERRY_NODES the network channel's listener is a socket. */
    const char *nodes = getenv("FERRY_NODES");
    if ((!getenv("FERRY_XFER") || !*getenv("FERRY_XFER")) &&
        (!nodes || atoi(nodes) <= 1))
        MT_CHECK(idle == 0,
                 "rank %d holds %d sockets or /proc/<pid>/mem "
                 "files after MPI_Init with the default rule table",
                 mt_rank, idle);
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    MT_CHECK(n > 0, "readlink /proc/self/exe failed");
    self[n] = '\0';
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "'%s' child", self);
    int rc = system(cmd);
    MT_CHECK(rc == 0, "a child program started by rank %d exited with %d",
             mt_rank, rc);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    return mt_finish("boot_env");
}
