/* SPDX-License-Identifier: MIT */
/* Start-up and environment queries: MPI_Initialized/MPI_Finalized before,
 * during and after, MPI_Init_thread (the provided level is reported and
 * agrees with MPI_Query_thread), MPI_Is_thread_main, MPI_Get_version,
 * MPI_Get_library_version, MPI_Get_processor_name, MPI_TAG_UB, and
 * MPI_Wtime/MPI_Wtick sanity against the system clock. Works as a
 * singleton too. */
#include <time.h>
#include <unistd.h>

#include "mpitest.h"

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *level_name(int l)
{
    switch (l) {
    case MPI_THREAD_SINGLE:
        return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
        return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
        return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
        return "MPI_THREAD_MULTIPLE";
    default:
        return "?";
    }
}

int main(int argc, char **argv)
{
    int flag = -1, provided = -1, q = -1;
    MT_MPI(MPI_Initialized(&flag));
    MT_EQ(flag, 0, "MPI_Initialized before init");
    MT_MPI(MPI_Finalized(&flag));
    MT_EQ(flag, 0, "MPI_Finalized before init");

    /* Version queries are allowed before MPI_Init. */
    int ver = -1, sub = -1;
    MT_MPI(MPI_Get_version(&ver, &sub));

    MT_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
    MT_CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE,
             "provided level %d", provided);
    MT_CHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED &&
                 MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
                 MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE,
             "thread levels are not monotonic");
    MT_MPI(MPI_Query_thread(&q));
    MT_EQ(q, provided, "MPI_Query_thread equals provided");
    MT_MPI(MPI_Is_thread_main(&flag));
    MT_EQ(flag, 1, "MPI_Is_thread_main on the main thread");
    MT_MPI(MPI_Initialized(&flag));
    MT_EQ(flag, 1, "MPI_Initialized after init");
    MT_MPI(MPI_Finalized(&flag));
    MT_EQ(flag, 0, "MPI_Finalized while running");

    /* MPI 4.0: what mpi.h says, and what Ferry (and MPICH 4.0.2) claim. */
    MT_CHECK(ver == MPI_VERSION && sub == MPI_SUBVERSION && ver == 4 &&
                 sub == 0,
             "MPI_Get_version %d.%d, mpi.h %d.%d", ver, sub, MPI_VERSION,
             MPI_SUBVERSION);
    int ver2 = -1, sub2 = -1;
    MT_MPI(MPI_Get_version(&ver2, &sub2));
    MT_CHECK(ver2 == ver && sub2 == sub, "version changed across init");

    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = -1;
    memset(lib, 0x7f, sizeof lib);
    MT_MPI(MPI_Get_library_version(lib, &len));
    MT_CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING,
             "library version length %d", len);
    MT_EQ((int)strlen(lib), len, "library version length matches strlen");
    MT_CHECK(mt_on_mpich() || strstr(lib, "MPI 4.0") != NULL,
             "library version \"%s\" does not say MPI 4.0", lib);

    char name[MPI_MAX_PROCESSOR_NAME];
    memset(name, 0x7f, sizeof name);
    MT_MPI(MPI_Get_processor_name(name, &len));
    MT_CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME,
             "processor name length %d", len);
    MT_EQ((int)strlen(name), len, "processor name length matches strlen");

    int *ub = NULL;
    MT_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    MT_CHECK(flag && *ub >= 32767, "MPI_TAG_UB");

    /* Wtick: a positive resolution no coarser than a millisecond. */
    double tick = MPI_Wtick();
    MT_CHECK(tick > 0 && tick <= 1e-3, "MPI_Wtick %g", tick);
    /* Wtime advances with the monotonic clock over a 20 ms busy wait. It
     * may only run faster than the clock read inside it, never slower, and
     * never by more than scheduling noise. */
    double w0 = MPI_Wtime(), c0 = mono_now(), c1, w1, prev = w0;
    do {
        double w = MPI_Wtime();
        MT_CHECK(w >= prev, "MPI_Wtime went backwards: %.9f < %.9f", w, prev);
        prev = w;
        c1 = mono_now();
    } while (c1 - c0 < 0.02);
    w1 = MPI_Wtime();
    MT_CHECK(w1 - w0 >= (c1 - c0) * 0.99 && w1 - w0 < (c1 - c0) + 2.0,
             "MPI_Wtime advanced %.6f s while the clock advanced %.6f s",
             w1 - w0, c1 - c0);

    /* Everyone agrees on the size; print what this library reports. */
    int maxsz = 0;
    MT_MPI(
        MPI_Allreduce(&mt_size, &maxsz, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    MT_EQ(maxsz, mt_size, "size agreed");
    if (mt_rank == 0) {
        char *nl = strchr(lib, '\n');
        if (nl)
            *nl = '\0';
        printf("init_misc: MPI %d.%d, thread level %s, processor %s, "
               "library \"%.60s\"\n",
               ver, sub, level_name(provided), name, lib);
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0)
        printf("init_misc: OK (%d ranks)\n", mt_size);
    fflush(stdout);
    MT_MPI(MPI_Finalize());
    MT_MPI(MPI_Finalized(&flag));
    MT_EQ(flag, 1, "MPI_Finalized after finalize");
    MT_MPI(MPI_Initialized(&flag));
    MT_EQ(flag, 1, "MPI_Initialized stays true after finalize");
    return 0;
}
