/* SPDX-License-Identifier: MIT */
/* The library lock of MPI_THREAD_MULTIPLE (see mt.h). */
#include "util/mt.h"

#include <pthread.h>

bool fy_mt_on;

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int t_depth;

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
