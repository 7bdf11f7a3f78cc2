/* SPDX-License-Identifier: MIT */
/* Error handler objects: the three predefined handlers live at MPICH's
 * builtin handle values; handlers made by MPI_Comm_create_errhandler get
 * direct handles and are freed when the last communicator using them and
 * the user's handle are gone. What a handler does is decided in
 * src/mpi/err.c. */
#include "comm/comm_int.h"

#include <errno.h>
#include <stdlib.h>

#include "util/handle.h"
#include "util/mt.h"

/* Indexed by the builtin handle's index: MPICH leaves index 2 to an
 * internal C++ handler, so that slot stays invalid. */
static struct fy_errhandler s_eh_builtin[4] = {
    {.handle = MPI_ERRORS_ARE_FATAL, .refcount = 1, .builtin = true},
    {.handle = MPI_ERRORS_RETURN, .refcount = 1, .builtin = true},
    {.handle = MPI_ERRHANDLER_NULL, .refcount = 0, .builtin = false},
    {.handle = MPI_ERRORS_ABORT, .refcount = 1, .builtin = true},
};

static struct fy_handle_table s_errhandlers =
    FY_HANDLE_TABLE_INIT(FY_HT_ERRHANDLER);

struct fy_errhandler *fy_errhandler_get(MPI_Errhandler h)
{
    if (fy_handle_kind(h) == FY_HANDLE_KIND_BUILTIN) {
        if (fy_handle_type(h) != FY_HT_ERRHANDLER)
            return NULL;
        uint32_t idx = fy_handle_index(h);
        if (idx >= FY_ARRAY_LEN(s_eh_builtin) || !s_eh_builtin[idx].builtin)
            return NULL;
        return &s_eh_builtin[idx];
    }
    return fy_handle_get(&s_errhandlers, h);
}

int fy_errhandler_create(MPI_Comm_errhandler_function *fn,
                         struct fy_errhandler **out)
{
    struct fy_errhandler *eh = calloc(1, sizeof(*eh));
    if (!eh)
        return -ENOMEM;
    eh->fn = fn;
    eh->refcount = 1;
    if (fy_handle_alloc(&s_errhandlers, eh, &eh->handle) != 0) {
        free(eh);
        return -ENOMEM;
    }
    *out = eh;
    return 0;
}

void fy_errhandler_release(struct fy_errhandler *eh)
{
    if (!eh || eh->builtin)
        return;
    if (fy_mt_ref_dec(&eh->refcount) > 0)
        return;
    fy_handle_release(&s_errhandlers, eh->handle);
    free(eh);
}
