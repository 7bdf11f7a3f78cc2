/* SPDX-License-Identifier: MIT */
/* Unit test of the reduction kernels (src/dtype/op.c) against a scalar
 * reference written here, element by element: every predefined op on every
 * basic type it is defined for, lengths around every vector width, buffers
 * misaligned for their type by every offset, the in-place case (in ==
 * inout), and floating-point special values (NaN, signed zeros, infinities,
 * denormals) whose results must be bit-identical to the serial left-to-right
 * result, MIN/MAX's NaN handling included. MINLOC/MAXLOC are checked on
 * every pair type the same way. Runs in one process without MPI_Init. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dtype/dtype.h"
#include "harness.h"
#include "util/util.h"

/* 64-byte aligned memory (aligned_alloc wants a multiple of 64). */
static void *alloc64(size_t n)
{
    void *p = aligned_alloc(64, (n + 63) / 64 * 64);
    if (!p) {
        printf("# out of memory\n");
        exit(1);
    }
    return p;
}

static struct fy_dtype *T(MPI_Datatype h)
{
    struct fy_dtype *dt = fy_dtype_get(h);
    if (!dt) {
        printf("# no predefined datatype 0x%x\n", (unsigned)h);
        exit(1);
    }
    return dt;
}

/* ---- deterministic inputs ------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
    /* xorshift64*: fixed seed, so a failure reproduces. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

enum cls { C_SINT, C_UINT, C_FLT, C_DBL, C_LDBL, C_CPLX, C_BOOL, C_BYTE };

struct tcase {
    MPI_Datatype h;
    const char *name;
    size_t size;
    enum cls cls;
    size_t part; /* complex: size of one part */
};

static const struct tcase types[] = {
    {MPI_CHAR, "char", 1, C_SINT, 0},
    {MPI_SIGNED_CHAR, "signed char", 1, C_SINT, 0},
    {MPI_UNSIGNED_CHAR, "unsigned char", 1, C_UINT, 0},
    {MPI_BYTE, "byte", 1, C_BYTE, 0},
    {MPI_SHORT, "short", 2, C_SINT, 0},
    {MPI_UNSIGNED_SHORT, "unsigned short", 2, C_UINT, 0},
    {MPI_INT, "int", 4, C_SINT, 0},
    {MPI_UNSIGNED, "unsigned", 4, C_UINT, 0},
    {MPI_LONG, "long", 8, C_SINT, 0},
    {MPI_UNSIGNED_LONG, "unsigned long", 8, C_UINT, 0},
    {MPI_LONG_LONG, "long long", 8, C_SINT, 0},
    {MPI_UNSIGNED_LONG_LONG, "unsigned long long", 8, C_UINT, 0},
    {MPI_INT8_T, "int8", 1, C_SINT, 0},
    {MPI_INT16_T, "int16", 2, C_SINT, 0},
    {MPI_INT32_T, "int32", 4, C_SINT, 0},
    {MPI_INT64_T, "int64", 8, C_SINT, 0},
    {MPI_UINT8_T, "uint8", 1, C_UINT, 0},
    {MPI_UINT16_T, "uint16", 2, C_UINT, 0},
    {MPI_UINT32_T, "uint32", 4, C_UINT, 0},
    {MPI_UINT64_T, "uint64", 8, C_UINT, 0},
    {MPI_AINT, "aint", 8, C_SINT, 0},
    {MPI_OFFSET, "offset", 8, C_SINT, 0},
    {MPI_COUNT, "count", 8, C_SINT, 0},
    {MPI_FLOAT, "float", sizeof(float), C_FLT, 0},
    {MPI_DOUBLE, "double", sizeof(double), C_DBL, 0},
    {MPI_LONG_DOUBLE, "long double", sizeof(long double), C_LDBL, 0},
    {MPI_C_BOOL, "bool", 1, C_BOOL, 0},
    {MPI_C_FLOAT_COMPLEX, "float complex", sizeof(float _Complex), C_CPLX,
     sizeof(float)},
    {MPI_C_DOUBLE_COMPLEX, "double complex", sizeof(double _Complex), C_CPLX,
     sizeof(double)},
    {MPI_C_LONG_DOUBLE_COMPLEX, "long double complex",
     sizeof(long double _Complex), C_CPLX, sizeof(long double)},
    /* Fortran names map onto the same basic types. */
    {MPI_INTEGER, "INTEGER", 4, C_SINT, 0},
    {MPI_REAL, "REAL", sizeof(float), C_FLT, 0},
    {MPI_DOUBLE_PRECISION, "DOUBLE PRECISION", sizeof(double), C_DBL, 0},
    {MPI_INTEGER8, "INTEGER8", 8, C_SINT, 0},
};

static const struct {
    MPI_Op h;
    const char *name;
} ops[] = {
    {MPI_MAX, "MAX"},   {MPI_MIN, "MIN"},   {MPI_SUM, "SUM"},
    {MPI_PROD, "PROD"}, {MPI_LAND, "LAND"}, {MPI_LOR, "LOR"},
    {MPI_LXOR, "LXOR"}, {MPI_BAND, "BAND"}, {MPI_BOR, "BOR"},
    {MPI_BXOR, "BXOR"},
};

/* A value of a floating type: mostly ordinary numbers, often a special
 * one, sometimes equal to 'other' (ties for MIN/MAX). */
#define GEN_FLOAT(T, MAXV, MINV)                                               \
    static T gen_##T(void)                                                     \
    {                                                                          \
        static const T special[] = {                                           \
            NAN,   -NAN,     INFINITY,  -INFINITY, 0.0,  -0.0, MAXV,           \
            -MAXV, MINV / 4, -MINV / 4, 1.0,       -1.0, 0.5};                 \
        uint64_t r = rng();                                                    \
        if (r % 4 == 0)                                                        \
            return special[(r >> 8) % FY_ARRAY_LEN(special)];                  \
        return (T)((int64_t)(r >> 16) % 2000000) / (T)1024;                    \
    }
typedef long double ldouble;
GEN_FLOAT(float, FLT_MAX, FLT_MIN)
GEN_FLOAT(double, DBL_MAX, DBL_MIN)
GEN_FLOAT(ldouble, LDBL_MAX, LDBL_MIN)

/* Fill n elements of type t at p (any alignment). */
static void gen(const struct tcase *t, char *p, size_t n)
{
    for (size_t i = 0; i < n; i++, p += t->size) {
        switch (t->cls) {
        case C_SINT:
        case C_UINT:
        case C_BYTE: {
            uint64_t v = rng();
            if (v % 3 == 0)
                v = 0; /* zeros matter to LAND/LOR/LXOR */
            else if (v % 7 == 0)
                v = 1;
            memcpy(p, &v, t->size);
            break;
        }
        case C_BOOL: {
            bool b = rng() & 1;
            memcpy(p, &b, 1);
            break;
        }
        case C_FLT: {
            float v = gen_float();
            memcpy(p, &v, sizeof(v));
            break;
        }
        case C_DBL: {
            double v = gen_double();
            memcpy(p, &v, sizeof(v));
            break;
        }
        case C_LDBL: {
            /* The 6 padding bytes of an x87 long double carry nothing:
             * zero them so whole elements compare with memcmp. */
            long double v = gen_ldouble();
            memset(p, 0, t->size);
            memcpy(p, &v, 10 < t->size ? 10 : t->size);
            break;
        }
        case C_CPLX:
            if (t->part == sizeof(float)) {
                float v[2] = {gen_float(), gen_float()};
                memcpy(p, v, sizeof(v));
            } else if (t->part == sizeof(double)) {
                double v[2] = {gen_double(), gen_double()};
                memcpy(p, v, sizeof(v));
            } else {
                long double v[2] = {gen_ldouble(), gen_ldouble()};
                memset(p, 0, t->size);
                memcpy(p, &v[0], 10);
                memcpy(p + t->part, &v[1], 10);
            }
            break;
        }
    }
}

/* ---- the reference: one element at a time, as MPI defines it --------- */

enum {
    R_MAX,
    R_MIN,
    R_SUM,
    R_PROD,
    R_LAND,
    R_LOR,
    R_LXOR,
    R_BAND,
    R_BOR,
    R_BXOR
};

/* io = in op io. MIN/MAX keep io unless 'in' compares strictly smaller
 * (larger): with a NaN on either side io stays, and of two equal zeros
 * io's sign stays (the behaviour Ferry has always had). Integer sums and
 * products wrap. */
#define REF_INT(T, UT)                                                         \
    static void ref_##UT(int op, const char *pi, char *po)                     \
    {                                                                          \
        T a, b, r = 0;                                                         \
        memcpy(&a, pi, sizeof(T));                                             \
        memcpy(&b, po, sizeof(T));                                             \
        switch (op) {                                                          \
        case R_MAX:                                                            \
            r = a > b ? a : b;                                                 \
            break;                                                             \
        case R_MIN:                                                            \
            r = a < b ? a : b;                                                 \
            break;                                                             \
        case R_SUM:                                                            \
            r = (T)(UT)((UT)a + (UT)b);                                        \
            break;                                                             \
        case R_PROD:                                                           \
            r = (T)(UT)((UT)a * (UT)b);                                        \
            break;                                                             \
        case R_LAND:                                                           \
            r = (T)(a != 0 && b != 0);                                         \
            break;                                                             \
        case R_LOR:                                                            \
            r = (T)(a != 0 || b != 0);                                         \
            break;                                                             \
        case R_LXOR:                                                           \
            r = (T)((a != 0) != (b != 0));                                     \
            break;                                                             \
        case R_BAND:                                                           \
            r = (T)(a & b);                                                    \
            break;                                                             \
        case R_BOR:                                                            \
            r = (T)(a | b);                                                    \
            break;                                                             \
        case R_BXOR:                                                           \
            r = (T)(a ^ b);                                                    \
            break;                                                             \
        }                                                                      \
        memcpy(po, &r, sizeof(T));                                             \
    }
/* clang-format off */
REF_INT(int8_t, uint8_t)
REF_INT(int16_t, uint16_t)
REF_INT(int32_t, uint32_t)
REF_INT(int64_t, uint64_t)
/* clang-format on */

#define REF_FLT(T)                                                             \
    static void ref_##T(int op, const char *pi, char *po)                      \
    {                                                                          \
        T a, b, r = 0;                                                         \
        memcpy(&a, pi, sizeof(T));                                             \
        memcpy(&b, po, sizeof(T));                                             \
        switch (op) {                                                          \
        case R_MAX:                                                            \
            r = a > b ? a : b;                                                 \
            break;                                                             \
        case R_MIN:                                                            \
            r = a < b ? a : b;                                                 \
            break;                                                             \
        case R_SUM:                                                            \
            r = a + b;                                                         \
            break;                                                             \
        case R_PROD:                                                           \
            r = a * b;                                                         \
            break;                                                             \
        }                                                                      \
        memcpy(po, &r, sizeof(T) < 10 ? sizeof(T) : 10);                       \
    }
/* clang-format off */
REF_FLT(float)
REF_FLT(double)
REF_FLT(ldouble)
/* clang-format on */

#define REF_CPLX(NAME, T)                                                      \
    static void NAME(int op, const char *pi, char *po)                         \
    {                                                                          \
        T a, b, r = 0;                                                         \
        memcpy(&a, pi, sizeof(T));                                             \
        memcpy(&b, po, sizeof(T));                                             \
        r = op == R_SUM ? a + b : a * b;                                       \
        memcpy(po, &r, sizeof(T));                                             \
    }
REF_CPLX(ref_fcplx, float _Complex)
REF_CPLX(ref_dcplx, double _Complex)

static void ref_ldcplx(int op, const char *pi, char *po)
{
    long double _Complex a, b, r;
    memcpy(&a, pi, sizeof(a));
    memcpy(&b, po, sizeof(b));
    r = op == R_SUM ? a + b : a * b;
    /* Keep the padding of both parts as gen() left it (zero). */
    long double re = creall(r), im = cimagl(r);
    memset(po, 0, sizeof(r));
    memcpy(po, &re, 10);
    memcpy(po + sizeof(long double), &im, 10);
}

static void ref_bool(int op, const char *pi, char *po)
{
    bool a, b, r = false;
    memcpy(&a, pi, 1);
    memcpy(&b, po, 1);
    if (op == R_LAND)
        r = a && b;
    else if (op == R_LOR)
        r = a || b;
    else if (op == R_LXOR)
        r = a != b;
    memcpy(po, &r, 1);
}

typedef void ref_fn(int op, const char *pi, char *po);

static ref_fn *ref_for(const struct tcase *t)
{
    switch (t->cls) {
    case C_SINT:
    case C_UINT:
    case C_BYTE:
        /* Signedness matters only to MIN/MAX: unsigned types use the
         * reference of the same width with an unsigned compare below. */
        return t->size == 1   ? ref_uint8_t
               : t->size == 2 ? ref_uint16_t
               : t->size == 4 ? ref_uint32_t
                              : ref_uint64_t;
    case C_FLT:
        return ref_float;
    case C_DBL:
        return ref_double;
    case C_LDBL:
        return ref_ldouble;
    case C_CPLX:
        return t->part == sizeof(float)    ? ref_fcplx
               : t->part == sizeof(double) ? ref_dcplx
                                           : ref_ldcplx;
    case C_BOOL:
        return ref_bool;
    }
    return NULL;
}

/* MIN/MAX of unsigned types: the signed reference would compare wrongly. */
static void ref_umin_max(const struct tcase *t, int op, const char *pi,
                         char *po)
{
    uint64_t a = 0, b = 0;
    memcpy(&a, pi, t->size); /* little-endian: the low bytes */
    memcpy(&b, po, t->size);
    uint64_t r = op == R_MAX ? (a > b ? a : b) : (a < b ? a : b);
    memcpy(po, &r, t->size);
}

static void ref_apply(const struct tcase *t, int op, const char *in, char *io,
                      size_t n)
{
    ref_fn *f = ref_for(t);
    for (size_t i = 0; i < n; i++) {
        const char *pi = in + i * t->size;
        char *po = io + i * t->size;
        if (t->cls == C_UINT && (op == R_MAX || op == R_MIN))
            ref_umin_max(t, op, pi, po);
        else
            f(op, pi, po);
    }
}

/* ---- the sweep ------------------------------------------------------- */

static const size_t lengths[] = {0,   1,   2,   3,   4,   5,   7,    8,   9,
                                 15,  16,  17,  31,  32,  33,  63,   64,  65,
                                 127, 128, 129, 255, 256, 257, 1000, 4099};

/* Buffer offsets from a 64-byte boundary: aligned, misaligned for every
 * type, and misaligned differently on the two sides. */
static const unsigned offs[][2] = {{0, 0}, {1, 1}, {3, 0}, {0, 5},
                                   {7, 2}, {8, 8}, {4, 12}};

#define MAXN 4099
#define PAD 64

/* Whether one floating-point part of a and b are both NaN. Which NaN an
 * addition or a product returns when both inputs are NaN is not fixed by
 * C or IEEE 754 (the compiler may swap the operands of a commutative
 * operation), so SUM and PROD are only required to return a NaN; MIN and
 * MAX select an input, and that input's bits must come back exactly. */
static bool both_nan(size_t part, const char *a, const char *b)
{
    if (part == sizeof(float)) {
        float x, y;
        memcpy(&x, a, sizeof(x));
        memcpy(&y, b, sizeof(y));
        return isnan(x) && isnan(y);
    }
    if (part == sizeof(double)) {
        double x, y;
        memcpy(&x, a, sizeof(x));
        memcpy(&y, b, sizeof(y));
        return isnan(x) && isnan(y);
    }
    long double x, y;
    memcpy(&x, a, sizeof(x));
    memcpy(&y, b, sizeof(y));
    return isnan(x) && isnan(y);
}

/* Whether elements a and b hold the same value, byte for byte. An x87
 * long double has 10 significant bytes and 6 of padding, which a kernel
 * may fill with anything: those are not compared. */
static bool elem_eq(const struct tcase *t, int op, const char *a, const char *b)
{
    bool arith = op == R_SUM || op == R_PROD;
    size_t part = t->cls == C_CPLX ? t->part
                  : t->cls == C_FLT || t->cls == C_DBL || t->cls == C_LDBL
                      ? t->size
                      : 0;
    if (!part)
        return memcmp(a, b, t->size) == 0;
    size_t sig = part == sizeof(long double) ? 10 : part;
    for (size_t off = 0; off < t->size; off += part)
        if (memcmp(a + off, b + off, sig) != 0 &&
            !(arith && both_nan(part, a + off, b + off)))
            return false;
    return true;
}

static bool vec_eq(const struct tcase *t, int op, const char *a, const char *b,
                   size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!elem_eq(t, op, a + i * t->size, b + i * t->size))
            return false;
    return true;
}

/* Bytes of the element at i differ: print both for the report. */
static void show_diff(const struct tcase *t, int op, const char *got,
                      const char *want, size_t n, const char *ctx)
{
    for (size_t i = 0; i < n; i++) {
        if (elem_eq(t, op, got + i * t->size, want + i * t->size))
            continue;
        char g[64] = "", w[64] = "";
        for (size_t b = 0; b < t->size && b < 16; b++) {
            snprintf(g + 2 * b, 3, "%02x", (unsigned char)got[i * t->size + b]);
            snprintf(w + 2 * b, 3, "%02x",
                     (unsigned char)want[i * t->size + b]);
        }
        tap_diag("%s: element %zu of %zu: got %s, expected %s", ctx, i, n, g,
                 w);
        return;
    }
}

static void test_kernels(void)
{
    size_t cap = MAXN * sizeof(long double _Complex) + 2 * PAD;
    char *in = alloc64(cap), *io = alloc64(cap);
    char *ref = alloc64(cap), *orig = alloc64(cap);
    for (size_t k = 0; k < FY_ARRAY_LEN(types); k++) {
        const struct tcase *t = &types[k];
        struct fy_dtype *dt = T(t->h);
        for (int o = 0; o < (int)FY_ARRAY_LEN(ops); o++) {
            struct fy_op *op = fy_op_get(ops[o].h);
            if (!fy_op_valid_for(op, dt))
                continue;
            bool ok = true;
            char ctx[160] = "";
            for (size_t li = 0; li < FY_ARRAY_LEN(lengths) && ok; li++) {
                size_t n = lengths[li];
                for (size_t a = 0; a < FY_ARRAY_LEN(offs) && ok; a++) {
                    char *pi = in + offs[a][0], *po = io + offs[a][1];
                    gen(t, pi, n);
                    gen(t, po, n);
                    /* Guard bytes after the vector must survive. */
                    memset(po + n * t->size, 0x5a, PAD);
                    memcpy(orig, pi, n * t->size);
                    memcpy(ref, po, n * t->size);
                    ref_apply(t, o, orig, ref, n);
                    int rc = fy_op_apply(op, pi, po, (MPI_Count)n, dt);
                    snprintf(ctx, sizeof(ctx), "%s %s n=%zu offsets %u/%u",
                             ops[o].name, t->name, n, offs[a][0], offs[a][1]);
                    if (rc != 0 || !vec_eq(t, o, po, ref, n) ||
                        memcmp(pi, orig, n * t->size) != 0) {
                        tap_diag("rc %d", rc);
                        show_diff(t, o, po, ref, n, ctx);
                        ok = false;
                    }
                    for (size_t g = 0; g < PAD && ok; g++)
                        if ((unsigned char)po[n * t->size + g] != 0x5a) {
                            tap_diag("%s: wrote past the end", ctx);
                            ok = false;
                        }
                }
                /* In place: in and inout are the same buffer. */
                if (ok) {
                    char *p = io + 1;
                    gen(t, p, n);
                    memcpy(ref, p, n * t->size);
                    memcpy(orig, p, n * t->size);
                    ref_apply(t, o, orig, ref, n);
                    fy_op_apply(op, p, p, (MPI_Count)n, dt);
                    if (!vec_eq(t, o, p, ref, n)) {
                        snprintf(ctx, sizeof(ctx), "%s %s n=%zu in place",
                                 ops[o].name, t->name, n);
                        show_diff(t, o, p, ref, n, ctx);
                        ok = false;
                    }
                }
            }
            TAP_OK(ok, "%s on %s: every length, offset and in place",
                   ops[o].name, t->name);
        }
    }
    free(in);
    free(io);
    free(ref);
    free(orig);
}

/* The NaN and signed-zero behaviour of MIN/MAX, spelled out. */
static void test_minmax_specials(void)
{
    double in[6] = {NAN, 1.0, -0.0, 0.0, 2.0, -INFINITY};
    double io[6] = {1.0, NAN, 0.0, -0.0, INFINITY, NAN};
    double mx[6], mn[6];
    /* Enough copies to reach the vector loop, with the cases at its
     * start, middle and tail. */
    enum { N = 67 };
    double vin[N], vmx[N], vmn[N];
    for (int i = 0; i < N; i++) {
        vin[i] = in[i % 6];
        vmx[i] = io[i % 6];
        vmn[i] = io[i % 6];
    }
    memcpy(mx, io, sizeof(io));
    memcpy(mn, io, sizeof(io));
    fy_op_apply(fy_op_get(MPI_MAX), in, mx, 6, T(MPI_DOUBLE));
    fy_op_apply(fy_op_get(MPI_MIN), in, mn, 6, T(MPI_DOUBLE));
    fy_op_apply(fy_op_get(MPI_MAX), vin, vmx, N, T(MPI_DOUBLE));
    fy_op_apply(fy_op_get(MPI_MIN), vin, vmn, N, T(MPI_DOUBLE));
    TAP_OK(mx[0] == 1.0 && mn[0] == 1.0, "MAX/MIN(NaN, 1): inout's 1 stays");
    TAP_OK(isnan(mx[1]) && isnan(mn[1]), "MAX/MIN(1, NaN): inout's NaN stays");
    TAP_OK(!signbit(mx[2]) && !signbit(mn[2]), "(-0, +0): inout's +0 stays");
    TAP_OK(signbit(mx[3]) && signbit(mn[3]), "(+0, -0): inout's -0 stays");
    TAP_OK(mx[4] == INFINITY && mn[4] == 2.0, "MAX/MIN(2, inf)");
    TAP_OK(isnan(mx[5]) && isnan(mn[5]), "MAX/MIN(-inf, NaN): NaN stays");
    bool same = true;
    for (int i = 0; i < N; i++) {
        double w = mx[i % 6], v = mn[i % 6];
        if (memcmp(&vmx[i], &w, 8) != 0 || memcmp(&vmn[i], &v, 8) != 0)
            same = false;
    }
    TAP_OK(same, "the same answers from the vector loop (%d elements)", N);
}

/* ---- MINLOC / MAXLOC on every pair type ------------------------------ */

#define PAIR_REF(NAME, VT, IT)                                                 \
    static void NAME(bool is_min, const char *in, char *io, size_t n,          \
                     size_t stride, size_t ioff)                               \
    {                                                                          \
        for (size_t p = 0; p < n; p++) {                                       \
            const char *a = in + p * stride;                                   \
            char *b = io + p * stride;                                         \
            VT av, bv;                                                         \
            IT ai, bi;                                                         \
            memcpy(&av, a, sizeof(VT));                                        \
            memcpy(&bv, b, sizeof(VT));                                        \
            memcpy(&ai, a + ioff, sizeof(IT));                                 \
            memcpy(&bi, b + ioff, sizeof(IT));                                 \
            if (is_min ? av < bv : av > bv) {                                  \
                memcpy(b, &av, sizeof(VT));                                    \
                memcpy(b + ioff, &ai, sizeof(IT));                             \
            } else if (av == bv && ai < bi) {                                  \
                memcpy(b + ioff, &ai, sizeof(IT));                             \
            }                                                                  \
        }                                                                      \
    }
PAIR_REF(pref_fi, float, int)
PAIR_REF(pref_di, double, int)
PAIR_REF(pref_li, long, int)
PAIR_REF(pref_si, short, int)
PAIR_REF(pref_ii, int, int)
PAIR_REF(pref_ldi, long double, int)
PAIR_REF(pref_ff, float, float)
PAIR_REF(pref_dd, double, double)

typedef void pair_ref_fn(bool is_min, const char *in, char *io, size_t n,
                         size_t stride, size_t ioff);

/* Small values so that ties (and index tie-breaks) happen often. */
static void pair_gen(char *p, size_t n, size_t stride, size_t ioff,
                     size_t vsize, size_t isize, bool fv, bool fi)
{
    for (size_t i = 0; i < n; i++, p += stride) {
        memset(p, 0, stride);
        int v = (int)(rng() % 5) - 2, ix = (int)(rng() % 4);
        if (fv && vsize == sizeof(float)) {
            float f = rng() % 9 == 0 ? NAN : (float)v;
            memcpy(p, &f, sizeof(f));
        } else if (fv && vsize == sizeof(double)) {
            double d = rng() % 9 == 0 ? NAN : (double)v;
            memcpy(p, &d, sizeof(d));
        } else if (fv) {
            long double d = (long double)v;
            memcpy(p, &d, 10);
        } else {
            int64_t w = v;
            memcpy(p, &w, vsize); /* little-endian: the low bytes */
        }
        if (fi && isize == sizeof(float)) {
            float f = (float)ix;
            memcpy(p + ioff, &f, sizeof(f));
        } else if (fi) {
            double d = (double)ix;
            memcpy(p + ioff, &d, sizeof(d));
        } else {
            memcpy(p + ioff, &ix, sizeof(ix));
        }
    }
}

static void test_loc(void)
{
    static const struct {
        MPI_Datatype h;
        const char *name;
        pair_ref_fn *ref;
        size_t vsize, isize;
        bool fv, fi;
    } pairs[] = {
        {MPI_FLOAT_INT, "FLOAT_INT", pref_fi, 4, 4, true, false},
        {MPI_DOUBLE_INT, "DOUBLE_INT", pref_di, 8, 4, true, false},
        {MPI_LONG_INT, "LONG_INT", pref_li, 8, 4, false, false},
        {MPI_SHORT_INT, "SHORT_INT", pref_si, 2, 4, false, false},
        {MPI_2INT, "2INT", pref_ii, 4, 4, false, false},
        {MPI_LONG_DOUBLE_INT, "LONG_DOUBLE_INT", pref_ldi, sizeof(long double),
         4, true, false},
        {MPI_2REAL, "2REAL", pref_ff, 4, 4, true, true},
        {MPI_2DOUBLE_PRECISION, "2DOUBLE_PRECISION", pref_dd, 8, 8, true, true},
        {MPI_2INTEGER, "2INTEGER", pref_ii, 4, 4, false, false},
    };
    enum { NMAX = 300 };
    for (size_t k = 0; k < FY_ARRAY_LEN(pairs); k++) {
        struct fy_dtype *dt = T(pairs[k].h);
        size_t stride = (size_t)dt->extent;
        /* The index sits after the value, at the index type's alignment. */
        size_t ioff = pairs[k].vsize;
        if (ioff % pairs[k].isize)
            ioff += pairs[k].isize - ioff % pairs[k].isize;
        size_t bytes = NMAX * stride + 16;
        char *in = alloc64(bytes + 64), *io = alloc64(bytes + 64);
        char *ref = alloc64(bytes);
        bool ok = true;
        for (int m = 0; m < 2 && ok; m++) {
            for (size_t n = 0; n <= NMAX && ok; n += n < 20 ? 1 : 37) {
                for (unsigned off = 0; off < 3 && ok; off++) {
                    char *pi = in + off * 3, *po = io + off * 5;
                    pair_gen(pi, n, stride, ioff, pairs[k].vsize,
                             pairs[k].isize, pairs[k].fv, pairs[k].fi);
                    pair_gen(po, n, stride, ioff, pairs[k].vsize,
                             pairs[k].isize, pairs[k].fv, pairs[k].fi);
                    memcpy(ref, po, n * stride);
                    pairs[k].ref(m == 0, pi, ref, n, stride, ioff);
                    int rc =
                        fy_op_apply(fy_op_get(m == 0 ? MPI_MINLOC : MPI_MAXLOC),
                                    pi, po, (MPI_Count)n, dt);
                    if (rc != 0 || memcmp(po, ref, n * stride) != 0) {
                        tap_diag("%s %s n=%zu offset %u: rc %d, results "
                                 "differ",
                                 m == 0 ? "MINLOC" : "MAXLOC", pairs[k].name, n,
                                 off, rc);
                        ok = false;
                    }
                }
            }
        }
        TAP_OK(ok, "MINLOC and MAXLOC on %s: every length and offset",
               pairs[k].name);
        free(in);
        free(io);
        free(ref);
    }
}

int main(void)
{
    test_kernels();
    test_minmax_specials();
    test_loc();
    return tap_done();
}
