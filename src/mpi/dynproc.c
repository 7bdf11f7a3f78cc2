/* SPDX-License-Identifier: MIT */
/* Dynamic processes (MPI 4.0 chapter 11), which Ferry does not provide: its
 * launcher starts a fixed set of ranks and Ferry has no intercommunicators
 * to connect new ones with. Every call is defined, so programs link, and
 * each fails with the class the standard names for it (MPI_ERR_SPAWN,
 * MPI_ERR_PORT, MPI_ERR_NAME, MPI_ERR_SERVICE, else
 * MPI_ERR_UNSUPPORTED_OPERATION), through the error handler of the
 * communicator involved, with a message saying why. MPI_Comm_get_parent is
 * exact: no Ferry process has a parent. The calls fail on every rank
 * without communicating, so a collective one cannot leave ranks waiting. */
#include "mpi/mpi_impl.h"

#define NO_DYNPROC                                                             \
    "Ferry does not implement dynamic processes (its launcher starts a "       \
    "fixed set of ranks)"

static void set_null(MPI_Comm *out)
{
    if (out)
        *out = MPI_COMM_NULL;
}

/* The collective calls' common checks: initialised, valid communicator,
 * root in range, an output handle. Returns 0 or the class reported. */
static int check_collective(const char *fn, MPI_Comm comm, int root,
                            MPI_Comm *out, struct fy_comm **c_out)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    FY_CHECK(out != NULL, c, MPI_ERR_ARG, fn,
             "the output communicator pointer is NULL");
    FY_CHECK(root >= 0 && root < c->size, c, MPI_ERR_ROOT, fn,
             "root %d is not a rank of the communicator (size %d)", root,
             c->size);
    *c_out = c;
    return 0;
}

/* array_of_errcodes is significant where maxprocs is: at the root. */
static void fill_errcodes(int *errcodes, int n, bool is_root)
{
    if (errcodes == MPI_ERRCODES_IGNORE || !is_root)
        return;
    for (int i = 0; i < n; i++)
        errcodes[i] = MPI_ERR_SPAWN;
}

FY_API int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs,
                           MPI_Info info, int root, MPI_Comm comm,
                           MPI_Comm *intercomm, int array_of_errcodes[])
{
    FY_MT_ENTER();
    const char *fn = __func__;
    struct fy_comm *c = NULL;
    set_null(intercomm);
    int rc = check_collective(fn, comm, root, intercomm, &c);
    if (rc)
        return rc;
    (void)argv;
    (void)info;
    bool is_root = c->rank == root;
    fill_errcodes(array_of_errcodes, maxprocs, is_root);
    if (is_root && command)
        return fy_mpi_err(c, MPI_ERR_SPAWN, fn,
                          "%d process(es) of '%s' not started: " NO_DYNPROC,
                          maxprocs, command);
    return fy_mpi_err(c, MPI_ERR_SPAWN, fn, "no process started: " NO_DYNPROC);
}
FY_ALIAS(MPI_Comm_spawn)

FY_API int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[],
                                    char **array_of_argv[],
                                    const int array_of_maxprocs[],
                                    const MPI_Info array_of_info[], int root,
                                    MPI_Comm comm, MPI_Comm *intercomm,
                                    int array_of_errcodes[])
{
    FY_MT_ENTER();
    const char *fn = __func__;
    struct fy_comm *c = NULL;
    set_null(intercomm);
    int rc = check_collective(fn, comm, root, intercomm, &c);
    if (rc)
        return rc;
    (void)array_of_commands;
    (void)array_of_argv;
    (void)array_of_info;
    bool is_root = c->rank == root;
    int total = 0;
    if (is_root && array_of_maxprocs)
        for (int i = 0; i < count; i++)
            total += array_of_maxprocs[i] > 0 ? array_of_maxprocs[i] : 0;
    fill_errcodes(array_of_errcodes, total, is_root);
    return fy_mpi_err(c, MPI_ERR_SPAWN, fn,
                      "no process of %d command(s) started: " NO_DYNPROC,
                      count);
}
FY_ALIAS(MPI_Comm_spawn_multiple)

FY_API int PMPI_Comm_get_parent(MPI_Comm *parent)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(parent != NULL, NULL, MPI_ERR_ARG, __func__, "parent is NULL");
    *parent = MPI_COMM_NULL; /* every Ferry process was started by mpiexec */
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Comm_get_parent)

FY_API int PMPI_Open_port(MPI_Info info, char *port_name)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    (void)info;
    if (port_name)
        port_name[0] = '\0';
    return fy_mpi_err(NULL, MPI_ERR_UNSUPPORTED_OPERATION, __func__,
                      "no port can be opened: " NO_DYNPROC);
}
FY_ALIAS(MPI_Open_port)

FY_API int PMPI_Close_port(const char *port_name)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    return fy_mpi_err(NULL, MPI_ERR_PORT, __func__,
                      "'%s' is not an open port (Ferry opens none)",
                      port_name ? port_name : "(null)");
}
FY_ALIAS(MPI_Close_port)

static int connect_common(const char *fn, const char *port_name, int root,
                          MPI_Comm comm, MPI_Comm *newcomm)
{
    struct fy_comm *c = NULL;
    set_null(newcomm);
    int rc = check_collective(fn, comm, root, newcomm, &c);
    if (rc)
        return rc;
    return fy_mpi_err(c, MPI_ERR_PORT, fn,
                      "port '%s' cannot be used: " NO_DYNPROC,
                      c->rank == root && port_name ? port_name : "");
}

FY_API int PMPI_Comm_accept(const char *port_name, MPI_Info info, int root,
                            MPI_Comm comm, MPI_Comm *newcomm)
{
    FY_MT_ENTER();
    (void)info;
    return connect_common(__func__, port_name, root, comm, newcomm);
}
FY_ALIAS(MPI_Comm_accept)

FY_API int PMPI_Comm_connect(const char *port_name, MPI_Info info, int root,
                             MPI_Comm comm, MPI_Comm *newcomm)
{
    FY_MT_ENTER();
    (void)info;
    return connect_common(__func__, port_name, root, comm, newcomm);
}
FY_ALIAS(MPI_Comm_connect)

FY_API int PMPI_Publish_name(const char *service_name, MPI_Info info,
                             const char *port_name)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    (void)info;
    (void)port_name;
    return fy_mpi_err(NULL, MPI_ERR_UNSUPPORTED_OPERATION, __func__,
                      "service '%s' not published: " NO_DYNPROC,
                      service_name ? service_name : "(null)");
}
FY_ALIAS(MPI_Publish_name)

FY_API int PMPI_Unpublish_name(const char *service_name, MPI_Info info,
                               const char *port_name)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    (void)info;
    (void)port_name;
    return fy_mpi_err(NULL, MPI_ERR_SERVICE, __func__,
                      "service '%s' is not published (Ferry publishes none)",
                      service_name ? service_name : "(null)");
}
FY_ALIAS(MPI_Unpublish_name)

FY_API int PMPI_Lookup_name(const char *service_name, MPI_Info info,
                            char *port_name)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    (void)info;
    if (port_name)
        port_name[0] = '\0';
    return fy_mpi_err(NULL, MPI_ERR_NAME, __func__,
                      "service '%s' is not published (Ferry publishes none)",
                      service_name ? service_name : "(null)");
}
FY_ALIAS(MPI_Lookup_name)

FY_API int PMPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    set_null(intercomm);
    return fy_mpi_err(NULL, MPI_ERR_UNSUPPORTED_OPERATION, __func__,
                      "cannot join through socket %d: " NO_DYNPROC, fd);
}
FY_ALIAS(MPI_Comm_join)
