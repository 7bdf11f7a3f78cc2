/* SPDX-License-Identifier: MIT */
/* MPI_THREAD_MULTIPLE: the library's locks, taken by the guard macro every
 * MPI entry point opens with (src/mpi; tests/scripts/mt_guard.py checks it)
 * when the program asked for MULTIPLE. Below MULTIPLE no lock is touched:
 * a guard pays one load and one predicted branch, as before.
 *
 * Invariants (the lock order and what each lock guards):
 * - Guards: FY_MT_NONE (no lock: the call reads only immutable or per-call
 *   state; the reviewed list is LOCK_FREE in tests/scripts/mt_guard.py),
 *   FY_MT_OBJ (the object lock), FY_MT_WIN(win) and FY_MT_FILE(fh) (that
 *   window's or file's lock), FY_MT_ENTER (the engine lock: the default
 *   for everything else).
 * - Lock order, outermost first: window/file lock -> engine lock ->
 *   object lock -> handle-table locks (util/handle.c). A thread takes a
 *   lock only while holding none that comes later in the order. The
 *   object lock is given up around user callbacks (attribute copy/delete
 *   functions, error handlers) so a callback may call any MPI function.
 * - Engine lock (recursive, depth in t_depth; t_depth > 0 exactly when the
 *   thread holds it): p2p matching queues and requests, protocol and
 *   channel state, progress, collective schedules, communicator creation
 *   and freeing (context ids), attributes, user error codes, RMA epochs
 *   and window creation, MPI-IO opening/closing and collective I/O,
 *   sessions, MPI_T. A waiting thread gives it up completely between
 *   progress attempts (fy_mt_wait_begin/end), so a thread blocked in
 *   MPI_Recv never keeps another from sending or receiving. MPI_Test and
 *   MPI_Wait take it even on a request that is already complete.
 * - Object lock (recursive): object-management calls on datatypes, groups,
 *   ops, info objects, error handlers and keyvals that touch no
 *   communication state (create/commit/free/set/get). Engine code reads
 *   those objects without it: handle tables never move and have their own
 *   leaf lock; reference counts shared with the engine change through
 *   fy_mt_ref_inc/dec (atomic under MULTIPLE); the rest of a committed
 *   object is immutable while a handle or reference names it. Being
 *   innermost, it also guards what calls under different locks share: the
 *   MPI-IO file table (src/mpi/file.c) and the one-time fill of
 *   MPI_INFO_ENV (src/mpi/info.c).
 * - Window lock (one of FY_MT_STRIPES recursive mutexes, chosen by the
 *   handle): RMA data operations and flushes on a window. Puts and gets
 *   move data with loads, stores or the one-sided mechanism; accumulates
 *   serialise on the window's shared lock words and take the engine lock
 *   only if they must wait for one (progress needs it).
 * - File lock (one of FY_MT_STRIPES, chosen by the MPI_File): independent
 *   I/O, the individual file pointer and size/mode queries of one file.
 * - FERRY_MT_LOCKS=global turns every guard into the engine lock (the old
 *   single library lock), for comparison and as a fallback. */
#ifndef FY_UTIL_MT_H
#define FY_UTIL_MT_H

#include <stdbool.h>
#include <stdint.h>

#include "util/util.h"

/* Set once by MPI_Init_thread / MPI_Session_init (MULTIPLE), before any
 * other thread may call MPI; fy_mt_global with it from FERRY_MT_LOCKS. */
extern bool fy_mt_on;
extern bool fy_mt_global;

/* Turn MULTIPLE on (the calling thread is the only one in MPI). */
void fy_mt_start(void);

/* The engine lock. */
void fy_mt_lock(void);
void fy_mt_unlock(void);
/* Give the engine lock up completely around a wait (returns the depth to
 * give back to fy_mt_resume; 0 when the thread did not hold it). */
int fy_mt_suspend(void);
void fy_mt_resume(int depth);

/* The object lock; suspend/resume give it up around a user callback
 * (suspend returns the depth to give back, 0 when not held). */
void fy_mt_obj_lock(void);
void fy_mt_obj_unlock(void);
int fy_mt_obj_suspend(void);
void fy_mt_obj_resume(int depth);

/* Window and file locks: one of FY_MT_STRIPES recursive mutexes, picked
 * from a key (window handle index, file pointer). */
#define FY_MT_STRIPES 16u
void fy_mt_stripe_lock(unsigned stripe);
void fy_mt_stripe_unlock(unsigned stripe);

/* What a guard took, for its cleanup. */
enum fy_mt_kind {
    FY_MT_NOLOCK = 0,
    FY_MT_ENGINE,
    FY_MT_OBJECT,
    FY_MT_STRIPE, /* + stripe number */
};

/* Entry-point guards: lock now, unlock when the enclosing function returns
 * (whatever the path). A guard records what it took, so turning MULTIPLE
 * on inside MPI_Init_thread is safe. */
static inline int fy_mt_enter(void)
{
    if (FY_LIKELY(!fy_mt_on))
        return FY_MT_NOLOCK;
    fy_mt_lock();
    return FY_MT_ENGINE;
}
static inline int fy_mt_enter_obj(void)
{
    if (FY_LIKELY(!fy_mt_on))
        return FY_MT_NOLOCK;
    if (fy_mt_global) {
        fy_mt_lock();
        return FY_MT_ENGINE;
    }
    fy_mt_obj_lock();
    return FY_MT_OBJECT;
}
static inline int fy_mt_enter_none(void)
{
    if (FY_LIKELY(!fy_mt_on) || !fy_mt_global)
        return FY_MT_NOLOCK;
    fy_mt_lock();
    return FY_MT_ENGINE;
}
static inline int fy_mt_enter_stripe(uintptr_t key)
{
    if (FY_LIKELY(!fy_mt_on))
        return FY_MT_NOLOCK;
    if (fy_mt_global) {
        fy_mt_lock();
        return FY_MT_ENGINE;
    }
    unsigned s = (unsigned)(key % FY_MT_STRIPES);
    fy_mt_stripe_lock(s);
    return FY_MT_STRIPE + (int)s;
}
void fy_mt_leave_slow(int kind);
static inline void fy_mt_leave(int *kind)
{
    if (FY_UNLIKELY(*kind))
        fy_mt_leave_slow(*kind);
}

#define FY_MT_GUARD_(take)                                                     \
    int fy_mt_guard_ __attribute__((cleanup(fy_mt_leave), unused)) = (take)

/* The engine lock (the default). */
#define FY_MT_ENTER() FY_MT_GUARD_(fy_mt_enter())
/* The object lock. */
#define FY_MT_OBJ() FY_MT_GUARD_(fy_mt_enter_obj())
/* No lock: only for the calls listed in tests/scripts/mt_guard.py. */
#define FY_MT_NONE() FY_MT_GUARD_(fy_mt_enter_none())
/* The lock of window handle 'win' / of file 'fh'. */
#define FY_MT_WIN(win) FY_MT_GUARD_(fy_mt_enter_stripe((uint32_t)(win)))
#define FY_MT_FILE(fh) FY_MT_GUARD_(fy_mt_enter_stripe((uintptr_t)(fh) >> 4))

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

/* Around a user callback called with the object lock possibly held. */
static inline int fy_mt_callback_begin(void)
{
    return FY_UNLIKELY(fy_mt_on) ? fy_mt_obj_suspend() : 0;
}
static inline void fy_mt_callback_end(int depth)
{
    if (FY_UNLIKELY(depth))
        fy_mt_obj_resume(depth);
}

/* Reference counts that engine code and object-lock code both change:
 * plain below MULTIPLE, atomic above (out of line, so the inlined plain
 * path stays as small as the ++/-- it replaces). fy_mt_ref_dec returns the
 * new count (the caller frees at 0). */
void fy_mt_ref_inc_atomic(int *ref);
int fy_mt_ref_dec_atomic(int *ref);
static inline void fy_mt_ref_inc(int *ref)
{
    if (FY_LIKELY(!fy_mt_on))
        (*ref)++;
    else
        fy_mt_ref_inc_atomic(ref);
}
static inline int fy_mt_ref_dec(int *ref)
{
    if (FY_LIKELY(!fy_mt_on))
        return --(*ref);
    return fy_mt_ref_dec_atomic(ref);
}

#endif /* FY_UTIL_MT_H */
