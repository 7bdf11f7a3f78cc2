/* SPDX-License-Identifier: MIT */
/* Statistics and the timing loop shared by every transfer experiment.
 * Method: a barrier before each transfer so both processes start from
 * rest; per repeat, the mean of the middle 80% of the samples (seed 001,
 * section 5: drop the fastest and slowest 10%); the figure is the median
 * of the repeats. */
#include <stdlib.h>
#include <string.h>

#include "lab.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void lab_sort(double *v, int n)
{
    if (n > 0)
        qsort(v, (size_t)n, sizeof(*v), cmp_double);
}

double lab_median(double *v, int n)
{
    if (n <= 0)
        return 0;
    lab_sort(v, n);
    return n & 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double lab_trimmed_mean(double *v, int n)
{
    if (n <= 0)
        return 0;
    lab_sort(v, n);
    int cut = n / 10, m = n - 2 * cut;
    double s = 0;
    for (int i = cut; i < n - cut; i++)
        s += v[i];
    return s / m;
}

int lab_iters_for(const struct lab *L, size_t len)
{
    /* The seed averaged 1,000 iterations; large messages get fewer, enough
     * to move a fixed volume per repeat. */
    size_t volume = L->opt.quick ? (48u << 20) : (384u << 20);
    size_t cap = L->opt.quick ? 400 : 1000, floor = L->opt.quick ? 6 : 16;
    size_t n = volume / (len ? len : 1);
    if (n > cap)
        n = cap;
    if (n < floor)
        n = floor;
    return (int)n;
}

struct lab_fig lab_measure(struct lab *L, const struct lab_mech *m, size_t len,
                           bool rndv, int iters, int repeats)
{
    struct lab_fig f;
    memset(&f, 0, sizeof(f));
    if (iters > (int)LAB_MBOX)
        iters = LAB_MBOX;
    if (repeats > LAB_MAX_REPEATS)
        repeats = LAB_MAX_REPEATS;
    uint64_t stamp[LAB_MBOX];
    double *s = malloc(sizeof(double) * (size_t)iters);
    int warm = iters / 10 > 2 ? iters / 10 : 2;
    f.min = 1e300;
    f.valid = true;
    for (int r = -1; r < repeats; r++) {
        int n = r < 0 ? warm : iters;
        for (int it = 0; it < n; it++) {
            lab_barrier(L);
            lab_xfer_once(L, m, len, rndv, (unsigned)it, &stamp[it]);
        }
        lab_barrier(L);
        if (L->me == 0 && r >= 0) {
            for (int it = 0; it < n; it++) {
                s[it] = lab_xfer_sample(L, m, rndv, (unsigned)it, stamp[it]);
                if (s[it] < 0)
                    f.valid = false;
                if (s[it] < f.min)
                    f.min = s[it];
            }
            f.rep[r] = lab_trimmed_mean(s, n);
        }
        /* P1 may only overwrite the mbox once P0 has read it. */
        lab_barrier(L);
    }
    f.nrep = repeats;
    double tmp[LAB_MAX_REPEATS];
    memcpy(tmp, f.rep, sizeof(double) * (size_t)repeats);
    f.value = lab_median(tmp, repeats);
    free(s);
    return f;
}
