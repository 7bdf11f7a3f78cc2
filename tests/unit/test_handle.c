/* SPDX-License-Identifier: MIT */
/* Unit test of src/util/handle.c, the handle tables MPI_THREAD_MULTIPLE
 * relies on: handles across chunk boundaries resolve to their objects,
 * wrong kinds/types/indices resolve to nothing, released indices are
 * reused, and (with the MULTIPLE locks on) lookups in two threads stay
 * right while a third allocates and releases, growing the table through
 * many chunks (ThreadSanitizer checks the ordering under make test-tsan). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"
#include "util/handle.h"
#include "util/mt.h"

static struct fy_handle_table tab = FY_HANDLE_TABLE_INIT(FY_HT_GROUP);

enum { NFIXED = 1500, NGROW = 20000 };
static int fixed[NFIXED];
static uintptr_t fixed_obj[NFIXED];
static int stop_flag;
static int reader_bad[2];

static void test_basic(void)
{
    int ok = 1;
    for (int i = 0; i < NFIXED; i++) {
        fixed_obj[i] = 0x1000u + (uintptr_t)i * 16u;
        if (fy_handle_alloc(&tab, (void *)fixed_obj[i], &fixed[i]) != 0)
            ok = 0;
    }
    TAP_OK(ok, "%d handles allocated", NFIXED);
    int right = 1;
    for (int i = 0; i < NFIXED; i++)
        if (fy_handle_get(&tab, fixed[i]) != (void *)fixed_obj[i] ||
            fy_handle_index(fixed[i]) != (uint32_t)i)
            right = 0;
    TAP_OK(right, "every handle resolves to its object, index in order");
    TAP_EQ_INT((int)fy_handle_type(fixed[5]), FY_HT_GROUP, "handle type");
    TAP_OK(fy_handle_get(&tab, fixed[5] & ~(int)FY_HANDLE_KIND_MASK) == NULL,
           "invalid kind resolves to nothing");
    int other = (int)((uint32_t)fixed[5] & ~FY_HANDLE_TYPE_MASK) |
                (int)((uint32_t)FY_HT_COMM << 26);
    TAP_OK(fy_handle_get(&tab, other) == NULL,
           "another type resolves to nothing");
    int beyond = (int)(FY_HANDLE_KIND_DIRECT | ((uint32_t)FY_HT_GROUP << 26) |
                       (uint32_t)NFIXED);
    TAP_OK(fy_handle_get(&tab, beyond) == NULL,
           "an index never handed out resolves to nothing");
    int last = (int)(FY_HANDLE_KIND_DIRECT | ((uint32_t)FY_HT_GROUP << 26) |
                     FY_HANDLE_INDEX_MASK);
    TAP_OK(fy_handle_get(&tab, last) == NULL, "the largest index: nothing");

    fy_handle_release(&tab, fixed[100]);
    TAP_OK(fy_handle_get(&tab, fixed[100]) == NULL, "released: nothing");
    fy_handle_release(&tab, fixed[100]); /* twice: ignored */
    int h = 0;
    TAP_EQ_INT(fy_handle_alloc(&tab, (void *)fixed_obj[100], &h), 0,
               "alloc after release");
    TAP_EQ_INT((int)fy_handle_index(h), 100, "the released index is reused");
    fixed[100] = h;
    TAP_EQ_INT((int)fy_handle_count(&tab), NFIXED, "high-water mark");
}

static void *reader(void *arg)
{
    int id = (int)(intptr_t)arg;
    while (!__atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE)) {
        for (int i = 0; i < NFIXED; i++)
            if (fy_handle_get(&tab, fixed[i]) != (void *)fixed_obj[i])
                reader_bad[id]++;
    }
    return NULL;
}

static void test_threads(void)
{
    fy_mt_on = true; /* table locks on, as under MPI_THREAD_MULTIPLE */
    pthread_t r[2];
    for (int k = 0; k < 2; k++)
        pthread_create(&r[k], NULL, reader, (void *)(intptr_t)k);
    int *hs = malloc(NGROW * sizeof(int));
    int ok = hs != NULL;
    for (int i = 0; ok && i < NGROW; i++) {
        if (fy_handle_alloc(&tab, &hs[i], &hs[i]) != 0)
            ok = 0;
        if (i % 3 == 2) { /* release some as we go: reuse under readers */
            fy_handle_release(&tab, hs[i - 1]);
            if (fy_handle_alloc(&tab, &hs[i - 1], &hs[i - 1]) != 0)
                ok = 0;
        }
    }
    __atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
    for (int k = 0; k < 2; k++)
        pthread_join(r[k], NULL);
    TAP_OK(ok, "%d more handles while two threads look up", NGROW);
    TAP_EQ_INT(reader_bad[0] + reader_bad[1], 0,
               "lookups beside allocation always found their objects");
    int right = 1;
    for (int i = 0; ok && i < NGROW; i++)
        if (fy_handle_get(&tab, hs[i]) != &hs[i])
            right = 0;
    TAP_OK(right, "the new handles resolve");
    free(hs);
    fy_mt_on = false;
}

int main(void)
{
    test_basic();
    test_threads();
    fy_handle_table_reset(&tab);
    TAP_OK(fy_handle_get(&tab, fixed[0]) == NULL, "empty after reset");
    return tap_done();
}
