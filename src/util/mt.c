/* SPDX-License-Identifier: MIT */
/* The locks of MPI_THREAD_MULTIPLE (see mt.h for the order and what each
 * guards). */
#define _GNU_SOURCE /* PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP */
#include "util/mt.h"

#include <pthread.h>
#include <stdalign.h>
#include <string.h>

bool fy_mt_on;
bool fy_mt_global;

/* Each lock on its own cache line: threads on different locks must not
 * bounce one line between their cores. */
static alignas(64) pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int t_depth;

static alignas(64) pthread_mutex_t s_obj = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int t_obj_depth;

struct stripe {
    alignas(64) pthread_mutex_t m;
};
#define FY_MT_RECURSIVE                                                        \
    {                                                                          \
        PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP                                 \
    }
static struct stripe s_stripes[FY_MT_STRIPES] = {
    FY_MT_RECURSIVE, FY_MT_RECURSIVE, FY_MT_RECURSIVE, FY_MT_RECURSIVE,
    FY_MT_RECURSIVE, FY_MT_RECURSIVE, FY_MT_RECURSIVE, FY_MT_RECURSIVE,
    FY_MT_RECURSIVE, FY_MT_RECURSIVE, FY_MT_RECURSIVE, FY_MT_RECURSIVE,
    FY_MT_RECURSIVE, FY_MT_RECURSIVE, FY_MT_RECURSIVE, FY_MT_RECURSIVE,
};
_Static_assert(FY_MT_STRIPES == 16, "one initialiser per stripe");

void fy_mt_start(void)
{
    const char *mode = fy_env_str(FY_ENV_MT_LOCKS);
    fy_mt_global = mode && strcmp(mode, "global") == 0;
    fy_mt_on = true;
}

void fy_mt_lock(void)
{
    if (t_depth++ == 0)
        pthread_mutex_lock(&s_lock);
}

void fy_mt_unlock(void)
{
    if (--t_depth == 0)
        pthread_mutex_unlock(&s_lock);
}

int fy_mt_suspend(void)
{
    int d = t_depth;
    if (d) {
        t_depth = 0;
        pthread_mutex_unlock(&s_lock);
    }
    return d;
}

void fy_mt_resume(int depth)
{
    pthread_mutex_lock(&s_lock);
    t_depth = depth;
}

void fy_mt_obj_lock(void)
{
    if (t_obj_depth++ == 0)
        pthread_mutex_lock(&s_obj);
}

void fy_mt_obj_unlock(void)
{
    if (--t_obj_depth == 0)
        pthread_mutex_unlock(&s_obj);
}

int fy_mt_obj_suspend(void)
{
    int d = t_obj_depth;
    if (d) {
        t_obj_depth = 0;
        pthread_mutex_unlock(&s_obj);
    }
    return d;
}

void fy_mt_obj_resume(int depth)
{
    pthread_mutex_lock(&s_obj);
    t_obj_depth = depth;
}

void fy_mt_stripe_lock(unsigned stripe)
{
    pthread_mutex_lock(&s_stripes[stripe % FY_MT_STRIPES].m);
}

void fy_mt_stripe_unlock(unsigned stripe)
{
    pthread_mutex_unlock(&s_stripes[stripe % FY_MT_STRIPES].m);
}

void fy_mt_leave_slow(int kind)
{
    if (kind == FY_MT_ENGINE)
        fy_mt_unlock();
    else if (kind == FY_MT_OBJECT)
        fy_mt_obj_unlock();
    else if (kind >= FY_MT_STRIPE)
        fy_mt_stripe_unlock((unsigned)(kind - FY_MT_STRIPE));
}

void fy_mt_ref_inc_atomic(int *ref)
{
    __atomic_fetch_add(ref, 1, __ATOMIC_RELAXED);
}

int fy_mt_ref_dec_atomic(int *ref)
{
    /* Acquire-release: whoever brings the count to 0 and frees sees every
     * earlier holder's writes to the object. */
    return __atomic_sub_fetch(ref, 1, __ATOMIC_ACQ_REL);
}
