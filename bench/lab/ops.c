/* SPDX-License-Identifier: MIT */
/* ferry-bench --ops: the reduction kernels (fy_op_apply, src/dtype/op.c)
 * against memcpy, in one process. For each vector size the kernel runs
 * inout = in op inout over the whole vector, as the collectives call it;
 * GB/s counts the vector's bytes once (10^9 bytes per second of the
 * thread's CPU time), the same way for memcpy, so the ratio says how close
 * a reduction comes to a copy of the same data. */
#define _GNU_SOURCE
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dtype/dtype.h"
#include "lab.h"

struct ops_case {
    const char *type, *op;
    MPI_Datatype dt;
    MPI_Op mop;
    size_t esize;
    unsigned misalign; /* bytes added to both buffer addresses */
};

/* MPI_SUM on float, double and int is what issue 10 asks for; the other
 * rows show a comparison op, a product, a bitwise op and the path for
 * buffers that are not aligned for their type. */
static const struct ops_case ops_cases[] = {
    {"float", "SUM", MPI_FLOAT, MPI_SUM, sizeof(float), 0},
    {"double", "SUM", MPI_DOUBLE, MPI_SUM, sizeof(double), 0},
    {"int", "SUM", MPI_INT, MPI_SUM, sizeof(int), 0},
    {"double", "MAX", MPI_DOUBLE, MPI_MAX, sizeof(double), 0},
    {"float", "PROD", MPI_FLOAT, MPI_PROD, sizeof(float), 0},
    {"int64", "BXOR", MPI_INT64_T, MPI_BXOR, sizeof(int64_t), 0},
    {"double", "SUM +1B", MPI_DOUBLE, MPI_SUM, sizeof(double), 1},
};

static const size_t ops_sizes[] = {4u << 10, 256u << 10, 8u << 20};

/* Values that keep every op on the fast path of the FPU: sums of ones
 * never reach a denormal or an infinity, products of ones stay one. */
static void ops_fill(void *buf, size_t bytes, MPI_Datatype dt)
{
    float f1 = 1.0f;
    double d1 = 1.0;
    if (dt == MPI_FLOAT)
        for (size_t i = 0; i < bytes / sizeof(f1); i++)
            memcpy((char *)buf + i * sizeof(f1), &f1, sizeof(f1));
    else if (dt == MPI_DOUBLE)
        for (size_t i = 0; i < bytes / sizeof(d1); i++)
            memcpy((char *)buf + i * sizeof(d1), &d1, sizeof(d1));
    else
        memset(buf, 1, bytes);
}

/* Iterations per repeat: about 64 MiB of vector per repeat (8 with
 * --quick), at least 4. */
static int ops_iters(size_t bytes, bool quick)
{
    size_t volume = quick ? (8u << 20) : (64u << 20);
    size_t n = volume / bytes;
    return n < 4 ? 4 : (int)n;
}

/* CPU time of this thread: the machine is shared, and time spent
 * descheduled says nothing about a kernel. */
static uint64_t ops_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The best over repeats of the GB/s of one repeat (all its iterations):
 * other programs can only slow a repeat down. */
static double ops_time(const struct ops_case *c, char *in, char *io,
                       size_t bytes, int repeats, bool quick)
{
    struct fy_op *op = c ? fy_op_get(c->mop) : NULL;
    struct fy_dtype *dt = c ? fy_dtype_get(c->dt) : NULL;
    MPI_Count count = c ? (MPI_Count)(bytes / c->esize) : 0;
    int iters = ops_iters(bytes, quick);
    double best = 0;
    for (int r = -1; r < repeats; r++) {
        uint64_t t0 = ops_cpu_ns();
        for (int i = 0; i < iters; i++) {
            if (c)
                fy_op_apply(op, in, io, count, dt);
            else
                memcpy(io, in, bytes);
            /* Keep the compiler from merging or dropping iterations. */
            __asm__ volatile("" : : "r"(io) : "memory");
        }
        uint64_t t1 = ops_cpu_ns();
        double g = (double)bytes * iters / (double)(t1 > t0 ? t1 - t0 : 1);
        if (r >= 0 && g > best) /* r == -1 warms caches and pages */
            best = g;
    }
    return best;
}

int lab_ops_run(const struct lab_opts *o, FILE *out)
{
    size_t max = ops_sizes[FY_ARRAY_LEN(ops_sizes) - 1];
    /* 64-byte aligned, plus room for the misaligned rows. */
    char *in = aligned_alloc(64, max + 64), *io = aligned_alloc(64, max + 64);
    if (!in || !io) {
        fprintf(stderr, "ferry-bench: out of memory for --ops\n");
        free(in);
        free(io);
        return 1;
    }
    memset(in, 1, max + 64);
    memset(io, 1, max + 64);
    double copy[FY_ARRAY_LEN(ops_sizes)];
    for (size_t s = 0; s < FY_ARRAY_LEN(ops_sizes); s++)
        copy[s] = ops_time(NULL, in, io, ops_sizes[s], o->repeats, o->quick);

    fprintf(out,
            "Reduction kernels (fy_op_apply, inout = in op inout) against "
            "memcpy;\nGB/s = vector bytes / CPU time of the thread, best of %d "
            "repeats;\nratio = GB/s / memcpy's GB/s at the same size.\n\n",
            o->repeats);
    fprintf(out, "| type | op |");
    for (size_t s = 0; s < FY_ARRAY_LEN(ops_sizes); s++)
        fprintf(out, " %zu KiB GB/s | ratio |", ops_sizes[s] >> 10);
    fprintf(out, "\n|---|---|");
    for (size_t s = 0; s < FY_ARRAY_LEN(ops_sizes); s++)
        fprintf(out, "---|---|");
    fprintf(out, "\n| (memcpy) | - |");
    for (size_t s = 0; s < FY_ARRAY_LEN(ops_sizes); s++)
        fprintf(out, " %.1f | 1.00 |", copy[s]);
    fprintf(out, "\n");
    for (size_t k = 0; k < FY_ARRAY_LEN(ops_cases); k++) {
        const struct ops_case *c = &ops_cases[k];
        fprintf(out, "| %s | %s |", c->type, c->op);
        char *a = in + c->misalign, *b = io + c->misalign;
        for (size_t s = 0; s < FY_ARRAY_LEN(ops_sizes); s++) {
            ops_fill(a, ops_sizes[s], c->dt);
            ops_fill(b, ops_sizes[s], c->dt);
            double g = ops_time(c, a, b, ops_sizes[s], o->repeats, o->quick);
            fprintf(out, " %.1f | %.2f |", g, g / copy[s]);
        }
        fprintf(out, "\n");
        fflush(out);
    }
    free(in);
    free(io);
    return 0;
}
