/* SPDX-License-Identifier: MIT */
/* Reduction operations: the predefined ops on the basic types MPI allows
 * them for, applied run by run across a datatype's type map, MINLOC and
 * MAXLOC on value-index pairs, and user functions from MPI_Op_create.
 * Elements are loaded with memcpy because a derived type may place them
 * at any byte offset. */
#include <complex.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "dtype/dtype.h"
#include "dtype/dtype_int.h"
#include "util/handle.h"
#include "util/util.h"

/* clang-format off */
/* Predefined op codes: the low byte of their MPICH handles. */
enum {
    OP_MAX = 1, OP_MIN, OP_SUM, OP_PROD, OP_LAND, OP_BAND, OP_LOR, OP_BOR,
    OP_LXOR, OP_BXOR, OP_MINLOC, OP_MAXLOC, OP_REPLACE, OP_NO_OP,
    OP_LAST = OP_NO_OP
};
/* clang-format on */

static struct fy_op builtin_ops[OP_LAST + 1];
static struct fy_handle_table op_table = FY_HANDLE_TABLE_INIT(FY_HT_OP);

static inline int op_code(const struct fy_op *op)
{
    return op->builtin ? (int)((uint32_t)op->handle & 0xff) : 0;
}

/* ---- which basic types each op accepts ------------------------------- */

enum {
    CL_INT = 1,     /* C integers (MPICH counts MPI_CHAR among them) */
    CL_FLOAT = 2,   /* floating point */
    CL_COMPLEX = 4, /* C complex */
    CL_LOGICAL = 8, /* C _Bool */
    CL_BYTE = 16,   /* MPI_BYTE */
};

/* clang-format off */
static unsigned basic_class(uint32_t b)
{
    switch (b) {
    case FY_B_CHAR: case FY_B_SIGNED_CHAR: case FY_B_UNSIGNED_CHAR:
    case FY_B_SHORT: case FY_B_UNSIGNED_SHORT: case FY_B_INT:
    case FY_B_UNSIGNED: case FY_B_LONG: case FY_B_UNSIGNED_LONG:
    case FY_B_LONG_LONG: case FY_B_UNSIGNED_LONG_LONG: case FY_B_INT8:
    case FY_B_INT16: case FY_B_INT32: case FY_B_INT64: case FY_B_UINT8:
    case FY_B_UINT16: case FY_B_UINT32: case FY_B_UINT64: case FY_B_AINT:
    case FY_B_OFFSET: case FY_B_COUNT:
        return CL_INT;
    case FY_B_FLOAT: case FY_B_DOUBLE: case FY_B_LONG_DOUBLE:
        return CL_FLOAT;
    case FY_B_C_FLOAT_COMPLEX: case FY_B_C_DOUBLE_COMPLEX:
    case FY_B_C_LONG_DOUBLE_COMPLEX:
        return CL_COMPLEX;
    case FY_B_C_BOOL:
        return CL_LOGICAL;
    case FY_B_BYTE:
        return CL_BYTE;
    default: /* MPI_WCHAR, MPI_PACKED: no predefined reduction */
        return 0;
    }
}

bool fy_basic_is_int(uint32_t b)
{
    return basic_class(b) == CL_INT;
}

static unsigned op_classes(int code)
{
    switch (code) {
    case OP_MAX: case OP_MIN:
        return CL_INT | CL_FLOAT;
    case OP_SUM: case OP_PROD:
        return CL_INT | CL_FLOAT | CL_COMPLEX;
    case OP_LAND: case OP_LOR: case OP_LXOR:
        return CL_INT | CL_LOGICAL;
    case OP_BAND: case OP_BOR: case OP_BXOR:
        return CL_INT | CL_BYTE;
    default:
        return 0;
    }
}
/* clang-format on */

bool fy_op_valid_for(const struct fy_op *op, const struct fy_dtype *dt)
{
    if (!op || !dt)
        return false;
    if (!op->builtin)
        return true; /* user ops take any type */
    int code = op_code(op);
    if (code == OP_MINLOC || code == OP_MAXLOC)
        return dt->pair != 0;
    if (code == OP_REPLACE || code == OP_NO_OP)
        return false; /* one-sided only */
    if (dt->pair != 0)
        return false;
    unsigned ok = op_classes(code);
    for (uint32_t s = 0; s < dt->nsegs; s++)
        if (!(basic_class(dt->segs[s].basic) & ok))
            return false;
    return true;
}

bool fy_op_valid_for_accumulate(const struct fy_op *op,
                                const struct fy_dtype *dt)
{
    if (!op || !dt || !op->builtin)
        return false;
    int code = op_code(op);
    if (code == OP_REPLACE || code == OP_NO_OP)
        return true;
    return fy_op_valid_for(op, dt);
}

/* ---- element kernels ---------------------------------------------------
 * Each kernel computes io[i] = in[i] op io[i] for n elements of one basic
 * type, one loop per op so that the loop body is a single operation the
 * compiler vectorises (src/CMakeLists.txt builds this file with -O3; on
 * x86-64 the kernels are built twice, for the baseline and for AVX2, and
 * fy_op_init picks the table for this CPU). The results are those of the scalar
 * loop, bit for bit: every element is computed on its own, in the same type,
 * with no reassociation and no contraction (nothing here is a multiply-add,
 * and no -ffast-math), and MIN/MAX keep their exact NaN and signed-zero
 * behaviour: 'in' replaces io only when it compares strictly greater
 * (smaller), so a NaN on either side, or two zeros, leave io as it was.
 *
 * Elements are loaded and stored with memcpy: a user buffer, or a derived
 * type, may place them at any byte, and a fixed-size memcpy compiles to a
 * plain unaligned load or store, which is also what the vector loop uses.
 * 'in' and 'io' may overlap (an in-place reduction passes the same buffer
 * twice), so the pointers are not restrict: the vectoriser checks for
 * overlap at run time and falls back to the scalar loop, which is right
 * for any overlap.
 *
 * Integer sums and products wrap in the unsigned type of the same width
 * (signed overflow would be undefined in C).
 *
 * The choice is made in code, not with target_clones: an ifunc resolver
 * runs while the loader relocates the kernel table, before sanitizer
 * runtimes are up (ThreadSanitizer builds crashed there). */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FY_OP_AVX2 1
#else
#define FY_OP_AVX2 0
#endif

/* clang-format off */
#define LOOP(T, EXPR)                                                         \
    for (MPI_Count i = 0; i < n; i++) {                                       \
        T a, b, r;                                                            \
        memcpy(&a, in + i * (MPI_Count)sizeof(T), sizeof(T));                 \
        memcpy(&b, io + i * (MPI_Count)sizeof(T), sizeof(T));                 \
        r = (T)(EXPR);                                                        \
        memcpy(io + i * (MPI_Count)sizeof(T), &r, sizeof(T));                 \
    }                                                                         \
    break

#define INT_KERNEL(NAME, T, UT)                                               \
    FY_K_ATTR static void FY_K(NAME)(int op, const char *in, char *io,        \
                                     MPI_Count n)                             \
    {                                                                         \
        switch (op) {                                                         \
        case OP_MAX: LOOP(T, a > b ? a : b);                                  \
        case OP_MIN: LOOP(T, a < b ? a : b);                                  \
        case OP_SUM: LOOP(T, (UT)((UT)a + (UT)b));                            \
        case OP_PROD: LOOP(T, (UT)((UT)a * (UT)b));                           \
        case OP_LAND: LOOP(T, a && b);                                        \
        case OP_LOR: LOOP(T, a || b);                                         \
        case OP_LXOR: LOOP(T, !a != !b);                                      \
        case OP_BAND: LOOP(T, a & b);                                         \
        case OP_BOR: LOOP(T, a | b);                                          \
        case OP_BXOR: LOOP(T, a ^ b);                                         \
        default: break;                                                       \
        }                                                                     \
    }

#define FLOAT_KERNEL(NAME, T)                                                 \
    FY_K_ATTR static void FY_K(NAME)(int op, const char *in, char *io,        \
                                     MPI_Count n)                             \
    {                                                                         \
        switch (op) {                                                         \
        case OP_MAX: LOOP(T, a > b ? a : b);                                  \
        case OP_MIN: LOOP(T, a < b ? a : b);                                  \
        case OP_SUM: LOOP(T, a + b);                                          \
        case OP_PROD: LOOP(T, a * b);                                         \
        default: break;                                                       \
        }                                                                     \
    }

/* A complex sum is two independent real sums (the real parts, the
 * imaginary parts): the real kernel on twice as many elements gives the
 * same bits and vectorises. Products keep C's complex multiply (with its
 * NaN and infinity recovery), one element at a time. */
#define COMPLEX_KERNEL(NAME, T, REAL_KERNEL)                                  \
    FY_K_ATTR static void FY_K(NAME)(int op, const char *in, char *io,        \
                                     MPI_Count n)                             \
    {                                                                         \
        switch (op) {                                                         \
        case OP_SUM: FY_K(REAL_KERNEL)(op, in, io, 2 * n); break;             \
        case OP_PROD: LOOP(T, a * b);                                         \
        default: break;                                                       \
        }                                                                     \
    }

/* clang-format on */
typedef void (*kernel_fn)(int op, const char *in, char *io, MPI_Count n);

/* The C integer types are the fixed-width ones of their size and
 * signedness (checked below), so each shares that kernel. */
#define FY_SINT_KERNEL(T)                                                      \
    (sizeof(T) == 1   ? FY_K(k_i8)                                             \
     : sizeof(T) == 2 ? FY_K(k_i16)                                            \
     : sizeof(T) == 4 ? FY_K(k_i32)                                            \
                      : FY_K(k_i64))
#define FY_UINT_KERNEL(T)                                                      \
    (sizeof(T) == 1   ? FY_K(k_u8)                                             \
     : sizeof(T) == 2 ? FY_K(k_u16)                                            \
     : sizeof(T) == 4 ? FY_K(k_u32)                                            \
                      : FY_K(k_u64))

#define FY_K(name) name
#define FY_K_ATTR
#include "dtype/op_kernels.h"
#undef FY_K
#undef FY_K_ATTR
#if FY_OP_AVX2
#define FY_K(name) name##_avx2
#define FY_K_ATTR __attribute__((target("avx2")))
#include "dtype/op_kernels.h"
#include "util/mt.h"
#undef FY_K
#undef FY_K_ATTR
#endif

/* The table for this CPU (fy_op_init); the baseline until then. */
static const kernel_fn *kernels = kernel_tab;

_Static_assert(sizeof(short) == 2 && sizeof(int) == 4 &&
                   (sizeof(long) == 4 || sizeof(long) == 8) &&
                   sizeof(long long) == 8 && sizeof(MPI_Aint) == 8 &&
                   sizeof(MPI_Offset) == 8 && sizeof(MPI_Count) == 8,
               "C integer types share the fixed-width kernels");
_Static_assert(sizeof(float _Complex) == 2 * sizeof(float) &&
                   sizeof(double _Complex) == 2 * sizeof(double) &&
                   sizeof(long double _Complex) == 2 * sizeof(long double),
               "a complex is its real and imaginary parts, in that order");

/* ---- MINLOC / MAXLOC -----------------------------------------------------
 * The type map of a pair type (or of a type built only from one pair type)
 * lists value, index, value, index, ... in order, so walking its basic
 * elements two at a time yields the pairs. */

struct pair_walk {
    const struct fy_dtype *dt;
    MPI_Count i, r, k;
    uint32_t s;
};

/* Byte offset of the next basic element. */
static MPI_Aint pair_next(struct pair_walk *w)
{
    const struct fy_dtype *dt = w->dt;
    const struct fy_dtype_seg *g = &dt->segs[w->s];
    MPI_Aint off = (MPI_Aint)w->i * dt->extent +
                   (MPI_Aint)w->r * dt->rep_stride + g->disp +
                   (MPI_Aint)(w->k * (MPI_Count)fy_basic_tab[g->basic].size);
    if (++w->k == g->count) {
        w->k = 0;
        if (++w->s == dt->nsegs) {
            w->s = 0;
            if (++w->r == dt->rep) {
                w->r = 0;
                w->i++;
            }
        }
    }
    return off;
}

/* clang-format off */
/* One MINLOC/MAXLOC pair: value at byte vo, index at io_ of in and io
 * (ties keep the smaller index). */
#define LOC_PAIR(VT, IT, vo, io_)                                             \
    do {                                                                      \
        VT av, bv;                                                            \
        IT ai, bi;                                                            \
        memcpy(&av, in + (vo), sizeof(VT));                                   \
        memcpy(&bv, io + (vo), sizeof(VT));                                   \
        memcpy(&ai, in + (io_), sizeof(IT));                                  \
        memcpy(&bi, io + (io_), sizeof(IT));                                  \
        bool take = is_min ? av < bv : av > bv;                               \
        if (take) {                                                           \
            memcpy(io + (vo), &av, sizeof(VT));                               \
            memcpy(io + (io_), &ai, sizeof(IT));                              \
        } else if (av == bv && ai < bi) {                                     \
            memcpy(io + (io_), &ai, sizeof(IT));                              \
        }                                                                     \
    } while (0)

#define LOC_LOOP(VT, IT)                                                      \
    for (MPI_Count p = 0; p < npairs; p++) {                                  \
        MPI_Aint vo = pair_next(&w), io_ = pair_next(&w);                     \
        LOC_PAIR(VT, IT, vo, io_);                                            \
    }                                                                         \
    break

/* One pair per element of dt, value at 0 and index at *ioff_out (every
 * predefined pair type, and any duplicate or resize of one): the pairs
 * are then 'extent' bytes apart and need no walk. */
static bool pair_one_per_elem(const struct fy_dtype *dt, MPI_Aint *ioff_out)
{
    if (dt->rep != 1 || dt->segs[0].disp != 0)
        return false;
    if (dt->nsegs == 1 && dt->segs[0].count == 2) {
        *ioff_out = (MPI_Aint)fy_basic_tab[dt->segs[0].basic].size;
        return true;
    }
    if (dt->nsegs == 2 && dt->segs[0].count == 1 && dt->segs[1].count == 1) {
        *ioff_out = dt->segs[1].disp;
        return true;
    }
    return false;
}

#define LOC_STRIDED(VT, IT)                                                   \
    for (MPI_Count p = 0; p < count; p++) {                                   \
        MPI_Aint vo = (MPI_Aint)p * dt->extent, io_ = vo + ioff;              \
        LOC_PAIR(VT, IT, vo, io_);                                            \
    }                                                                         \
    break

static void apply_loc(bool is_min, const char *in, char *io, MPI_Count count,
                      const struct fy_dtype *dt)
{
    MPI_Aint ioff;
    if (pair_one_per_elem(dt, &ioff)) {
        switch (dt->pair) {
        case FY_PAIR_FLOAT_INT: LOC_STRIDED(float, int);
        case FY_PAIR_DOUBLE_INT: LOC_STRIDED(double, int);
        case FY_PAIR_LONG_INT: LOC_STRIDED(long, int);
        case FY_PAIR_SHORT_INT: LOC_STRIDED(short, int);
        case FY_PAIR_2INT: LOC_STRIDED(int, int);
        case FY_PAIR_LONG_DOUBLE_INT: LOC_STRIDED(long double, int);
        case FY_PAIR_2FLOAT: LOC_STRIDED(float, float);
        case FY_PAIR_2DOUBLE: LOC_STRIDED(double, double);
        default: break;
        }
        return;
    }
    struct pair_walk w = {dt, 0, 0, 0, 0};
    MPI_Count npairs = count * dt->nbasic / 2;
    switch (dt->pair) {
    case FY_PAIR_FLOAT_INT: LOC_LOOP(float, int);
    case FY_PAIR_DOUBLE_INT: LOC_LOOP(double, int);
    case FY_PAIR_LONG_INT: LOC_LOOP(long, int);
    case FY_PAIR_SHORT_INT: LOC_LOOP(short, int);
    case FY_PAIR_2INT: LOC_LOOP(int, int);
    case FY_PAIR_LONG_DOUBLE_INT: LOC_LOOP(long double, int);
    case FY_PAIR_2FLOAT: LOC_LOOP(float, float);
    case FY_PAIR_2DOUBLE: LOC_LOOP(double, double);
    default: break;
    }
}
/* clang-format on */

/* ---- applying an op -------------------------------------------------- */

/* Call a user function on at most INT_MAX elements at a time (its count
 * argument is an int). */
static void apply_user(struct fy_op *op, const char *in, char *io,
                       MPI_Count count, struct fy_dtype *dt)
{
    MPI_Datatype h = dt->handle;
    if (op->user_fn_c) {
        MPI_Count len = count;
        op->user_fn_c((void *)in, io, &len, &h);
        return;
    }
    while (count > 0) {
        int len = count > INT_MAX ? INT_MAX : (int)count;
        op->user_fn((void *)in, io, &len, &h);
        in += (MPI_Aint)len * dt->extent;
        io += (MPI_Aint)len * dt->extent;
        count -= len;
    }
}

int fy_op_apply(struct fy_op *op, const void *inv, void *inoutv,
                MPI_Count count, struct fy_dtype *dt)
{
    const char *in = inv;
    char *io = inoutv;
    if (count <= 0 || dt->size == 0)
        return 0;
    if (!op->builtin) {
        apply_user(op, in, io, count, dt);
        return 0;
    }
    int code = op_code(op);
    if (code == OP_NO_OP)
        return 0;
    if (code == OP_REPLACE) {
        /* Copy the data, leaving the holes of io alone. */
        for (MPI_Count i = 0; i < count; i++)
            for (MPI_Count r = 0; r < dt->rep; r++)
                for (uint32_t s = 0; s < dt->nsegs; s++) {
                    const struct fy_dtype_seg *g = &dt->segs[s];
                    MPI_Aint off = (MPI_Aint)i * dt->extent +
                                   (MPI_Aint)r * dt->rep_stride + g->disp;
                    memcpy(io + off, in + off,
                           (size_t)(g->count *
                                    (MPI_Count)fy_basic_tab[g->basic].size));
                }
        return 0;
    }
    if (!fy_op_valid_for(op, dt))
        return -EINVAL;
    if (code == OP_MINLOC || code == OP_MAXLOC) {
        apply_loc(code == OP_MINLOC, in, io, count, dt);
        return 0;
    }
    if (dt->contig && dt->nsegs == 1 && dt->rep == 1) {
        kernels[dt->segs[0].basic](code, in, io, count * dt->segs[0].count);
        return 0;
    }
    for (MPI_Count i = 0; i < count; i++)
        for (MPI_Count r = 0; r < dt->rep; r++)
            for (uint32_t s = 0; s < dt->nsegs; s++) {
                const struct fy_dtype_seg *g = &dt->segs[s];
                MPI_Aint off = (MPI_Aint)i * dt->extent +
                               (MPI_Aint)r * dt->rep_stride + g->disp;
                kernels[g->basic](code, in + off, io + off, g->count);
            }
    return 0;
}

void fy_op_apply_basic(const struct fy_op *op, uint32_t basic, const void *in,
                       void *inout, MPI_Count n)
{
    int code = op_code(op);
    if (n <= 0 || basic >= FY_B_COUNT_OF || code == OP_NO_OP)
        return;
    if (code == OP_REPLACE)
        memcpy(inout, in, (size_t)n * fy_basic_tab[basic].size);
    else if (code != OP_MINLOC && code != OP_MAXLOC)
        kernels[basic](code, in, inout, n);
}

/* ---- op objects ------------------------------------------------------ */

int fy_op_init(void)
{
#if FY_OP_AVX2
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2"))
        kernels = kernel_tab_avx2;
#endif
    for (int c = 1; c <= OP_LAST; c++) {
        struct fy_op *op = &builtin_ops[c];
        memset(op, 0, sizeof(*op));
        op->handle = (MPI_Op)(FY_HANDLE_KIND_BUILTIN |
                              ((uint32_t)FY_HT_OP << 26) | (uint32_t)c);
        op->builtin = true;
        op->commute = true;
        op->refcount = 1;
    }
    return 0;
}

void fy_op_finalize(void)
{
    for (uint32_t i = 0; i < fy_handle_count(&op_table); i++)
        free(fy_handle_at(&op_table, i));
    fy_handle_table_reset(&op_table);
}

struct fy_op *fy_op_get(MPI_Op h)
{
    if (fy_handle_type(h) != FY_HT_OP)
        return NULL;
    if (fy_handle_kind(h) == FY_HANDLE_KIND_BUILTIN) {
        uint32_t c = (uint32_t)h & FY_HANDLE_INDEX_MASK;
        if (c < 1 || c > OP_LAST)
            return NULL;
        if (!builtin_ops[c].builtin)
            fy_op_init(); /* before MPI_Init (unit tests) */
        return &builtin_ops[c];
    }
    struct fy_op *op = fy_handle_get(&op_table, h);
    return op && !op->freed ? op : NULL;
}

static int op_new(MPI_User_function *fn, MPI_User_function_c *fn_c,
                  bool commute, struct fy_op **out)
{
    struct fy_op *op = calloc(1, sizeof(*op));
    if (!op)
        return -ENOMEM;
    op->user_fn = fn;
    op->user_fn_c = fn_c;
    op->commute = commute;
    op->refcount = 1;
    int h;
    int rc = fy_handle_alloc(&op_table, op, &h);
    if (rc) {
        free(op);
        return rc;
    }
    op->handle = h;
    *out = op;
    return 0;
}

int fy_op_create(MPI_User_function *fn, bool commute, struct fy_op **out)
{
    return op_new(fn, NULL, commute, out);
}

int fy_op_create_c(MPI_User_function_c *fn, bool commute, struct fy_op **out)
{
    return op_new(NULL, fn, commute, out);
}

void fy_op_retain(struct fy_op *op)
{
    if (!op->builtin) /* never freed (fy_op_release ignores them) */
        fy_mt_ref_inc(&op->refcount);
}

void fy_op_release(struct fy_op *op)
{
    if (!op || op->builtin)
        return;
    if (fy_mt_ref_dec(&op->refcount) > 0)
        return;
    fy_handle_release(&op_table, op->handle);
    free(op);
}

void fy_op_free_handle(struct fy_op *op)
{
    if (op->builtin || op->freed)
        return;
    op->freed = true;
    fy_op_release(op);
}
