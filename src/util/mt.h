/* SPDX-License-Identifier: MIT */
/* MPI_THREAD_MULTIPLE: one library lock, taken by every MPI entry point
 * (FY_MT_ENTER in src/mpi) when the program asked for MULTIPLE, and given
 * up while a thread waits (the progress engine's idle steps and sleeps),
 * so a thread blocked in MPI_Recv never keeps another from sending the
 * message it waits for. Below MULTIPLE the lock is never touched: an entry
 * point pays one load and one predicted branch.
 *
 * The lock is recursive per thread (an entry point may call another), with
 * the depth in a thread-local counter. Invariant: a thread's t_depth > 0
 * exactly when it holds the mutex. */
#ifndef FY_UTIL_MT_H
#define FY_UTIL_MT_H

#include <stdbool.h>

#include "util/util.h"

/* Set once by MPI_Init_thread / MPI_Session_init (MULTIPLE), before any
 * other thread may call MPI. */
extern bool fy_mt_on;

void fy_mt_lock(void);
void fy_mt_unlock(void);

/* Give the lock up completely around a wait (returns the depth to give
 * back to fy_mt_resume; 0 when the thread did not hold it). */
int fy_mt_suspend(void);
void fy_mt_resume(int depth);

/* Entry-point guard: lock now, unlock when the enclosing function returns
 * (whatever the path). The guard records whether it locked, so turning
 * MULTIPLE on inside MPI_Init_thread is safe. */
static inline int fy_mt_enter(void)
{
    if (FY_LIKELY(!fy_mt_on))
        return 0;
    fy_mt_lock();
    return 1;
}
static inline void fy_mt_leave(int *locked)
{
    if (FY_UNLIKELY(*locked))
        fy_mt_unlock();
}

#define FY_MT_ENTER()                                                          \
    int fy_mt_guard_ __attribute__((cleanup(fy_mt_leave), unused)) =           \
        fy_mt_enter()

/* Around a wait: let other threads in (no-op below MULTIPLE). */
static inline int fy_mt_wait_begin(void)
{
    return FY_UNLIKELY(fy_mt_on) ? fy_mt_suspend() : 0;
}
static inline void fy_mt_wait_end(int depth)
{
    if (FY_UNLIKELY(depth))
        fy_mt_resume(depth);
}

#endif /* FY_UTIL_MT_H */
