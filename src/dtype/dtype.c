/* SPDX-License-Identifier: MIT */
/* Datatype objects: the predefined types behind MPICH's handle values, the
 * constructors that flatten a derived type into its type map, MPI's bound
 * and extent rules, handles and reference counts. Not thread safe: the MPI
 * layer serialises calls. */
#include "dtype/dtype.h"

#include <complex.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "dtype/dtype_int.h"
#include "util/handle.h"
#include "util/mt.h"
#include "util/util.h"

/* ---- basic types ------------------------------------------------------- */

#define BASIC(b, T) [b] = {sizeof(T), _Alignof(T)}
const struct fy_basic_info fy_basic_tab[FY_B_COUNT_OF] = {
    BASIC(FY_B_CHAR, char),
    BASIC(FY_B_SIGNED_CHAR, signed char),
    BASIC(FY_B_UNSIGNED_CHAR, unsigned char),
    BASIC(FY_B_BYTE, unsigned char),
    BASIC(FY_B_WCHAR, wchar_t),
    BASIC(FY_B_SHORT, short),
    BASIC(FY_B_UNSIGNED_SHORT, unsigned short),
    BASIC(FY_B_INT, int),
    BASIC(FY_B_UNSIGNED, unsigned),
    BASIC(FY_B_LONG, long),
    BASIC(FY_B_UNSIGNED_LONG, unsigned long),
    BASIC(FY_B_LONG_LONG, long long),
    BASIC(FY_B_UNSIGNED_LONG_LONG, unsigned long long),
    BASIC(FY_B_FLOAT, float),
    BASIC(FY_B_DOUBLE, double),
    BASIC(FY_B_LONG_DOUBLE, long double),
    BASIC(FY_B_C_BOOL, _Bool),
    BASIC(FY_B_INT8, int8_t),
    BASIC(FY_B_INT16, int16_t),
    BASIC(FY_B_INT32, int32_t),
    BASIC(FY_B_INT64, int64_t),
    BASIC(FY_B_UINT8, uint8_t),
    BASIC(FY_B_UINT16, uint16_t),
    BASIC(FY_B_UINT32, uint32_t),
    BASIC(FY_B_UINT64, uint64_t),
    BASIC(FY_B_AINT, MPI_Aint),
    BASIC(FY_B_OFFSET, MPI_Offset),
    BASIC(FY_B_COUNT, MPI_Count),
    BASIC(FY_B_PACKED, unsigned char),
    BASIC(FY_B_C_FLOAT_COMPLEX, float _Complex),
    BASIC(FY_B_C_DOUBLE_COMPLEX, double _Complex),
    BASIC(FY_B_C_LONG_DOUBLE_COMPLEX, long double _Complex),
};
#undef BASIC

size_t fy_basic_size(enum fy_basic b)
{
    return b < FY_B_COUNT_OF ? fy_basic_tab[b].size : 0;
}

/* ---- the predefined datatypes ------------------------------------------ */

/* clang-format off */
/* Pair layouts, taken from the C compiler so padding is the ABI's. */
struct pair_fi { float v; int i; };
struct pair_di { double v; int i; };
struct pair_li { long v; int i; };
struct pair_si { short v; int i; };
struct pair_ii { int v; int i; };
struct pair_ldi { long double v; int i; };
struct pair_ff { float v; float i; };
struct pair_dd { double v; double i; };

#define NONE (-1)
#define PAIR(S, vb, ib)                                                       \
    sizeof(struct S), _Alignof(struct S), vb, ib, offsetof(struct S, i)

/* One predefined type: a basic type, a pair, or an MPI_LB/UB marker. */
struct builtin_desc {
    MPI_Datatype handle;
    const char *name;
    int basic;            /* enum fy_basic, or NONE for pairs and markers */
    int pair;             /* enum fy_pair_kind */
    size_t psize, palign; /* pairs: struct size and alignment */
    int vbasic, ibasic;   /* pairs: value and index basic types */
    size_t ioff;          /* pairs: offset of the index */
};

static const struct builtin_desc builtin_descs[] = {
    /* C types */
    {MPI_CHAR, "MPI_CHAR", FY_B_CHAR, 0, 0, 0, 0, 0, 0},
    {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", FY_B_SIGNED_CHAR, 0, 0, 0, 0, 0, 0},
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", FY_B_UNSIGNED_CHAR, 0, 0, 0, 0, 0, 0},
    {MPI_BYTE, "MPI_BYTE", FY_B_BYTE, 0, 0, 0, 0, 0, 0},
    {MPI_WCHAR, "MPI_WCHAR", FY_B_WCHAR, 0, 0, 0, 0, 0, 0},
    {MPI_SHORT, "MPI_SHORT", FY_B_SHORT, 0, 0, 0, 0, 0, 0},
    {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", FY_B_UNSIGNED_SHORT, 0, 0, 0, 0, 0, 0},
    {MPI_INT, "MPI_INT", FY_B_INT, 0, 0, 0, 0, 0, 0},
    {MPI_UNSIGNED, "MPI_UNSIGNED", FY_B_UNSIGNED, 0, 0, 0, 0, 0, 0},
    {MPI_LONG, "MPI_LONG", FY_B_LONG, 0, 0, 0, 0, 0, 0},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", FY_B_UNSIGNED_LONG, 0, 0, 0, 0, 0, 0},
    {MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", FY_B_LONG_LONG, 0, 0, 0, 0, 0, 0},
    {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", FY_B_UNSIGNED_LONG_LONG, 0, 0, 0, 0, 0, 0},
    {MPI_FLOAT, "MPI_FLOAT", FY_B_FLOAT, 0, 0, 0, 0, 0, 0},
    {MPI_DOUBLE, "MPI_DOUBLE", FY_B_DOUBLE, 0, 0, 0, 0, 0, 0},
    {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", FY_B_LONG_DOUBLE, 0, 0, 0, 0, 0, 0},
    {MPI_PACKED, "MPI_PACKED", FY_B_PACKED, 0, 0, 0, 0, 0, 0},
    {MPI_LB, "MPI_LB", NONE, 0, 0, 0, 0, 0, 0},
    {MPI_UB, "MPI_UB", NONE, 0, 0, 0, 0, 0, 0},
    {MPI_INT8_T, "MPI_INT8_T", FY_B_INT8, 0, 0, 0, 0, 0, 0},
    {MPI_INT16_T, "MPI_INT16_T", FY_B_INT16, 0, 0, 0, 0, 0, 0},
    {MPI_INT32_T, "MPI_INT32_T", FY_B_INT32, 0, 0, 0, 0, 0, 0},
    {MPI_INT64_T, "MPI_INT64_T", FY_B_INT64, 0, 0, 0, 0, 0, 0},
    {MPI_UINT8_T, "MPI_UINT8_T", FY_B_UINT8, 0, 0, 0, 0, 0, 0},
    {MPI_UINT16_T, "MPI_UINT16_T", FY_B_UINT16, 0, 0, 0, 0, 0, 0},
    {MPI_UINT32_T, "MPI_UINT32_T", FY_B_UINT32, 0, 0, 0, 0, 0, 0},
    {MPI_UINT64_T, "MPI_UINT64_T", FY_B_UINT64, 0, 0, 0, 0, 0, 0},
    {MPI_C_BOOL, "MPI_C_BOOL", FY_B_C_BOOL, 0, 0, 0, 0, 0, 0},
    /* One handle with MPI_C_COMPLEX in the MPICH ABI: MPICH's name. */
    {MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX", FY_B_C_FLOAT_COMPLEX, 0, 0, 0, 0, 0, 0},
    {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", FY_B_C_DOUBLE_COMPLEX, 0, 0, 0, 0, 0, 0},
    {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", FY_B_C_LONG_DOUBLE_COMPLEX, 0, 0, 0, 0, 0, 0},
    {MPI_AINT, "MPI_AINT", FY_B_AINT, 0, 0, 0, 0, 0, 0},
    {MPI_OFFSET, "MPI_OFFSET", FY_B_OFFSET, 0, 0, 0, 0, 0, 0},
    {MPI_COUNT, "MPI_COUNT", FY_B_COUNT, 0, 0, 0, 0, 0, 0},
    /* C++ types: same representation as their C counterparts. */
    {MPI_CXX_BOOL, "MPI_CXX_BOOL", FY_B_C_BOOL, 0, 0, 0, 0, 0, 0},
    {MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", FY_B_C_FLOAT_COMPLEX, 0, 0, 0, 0, 0, 0},
    {MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", FY_B_C_DOUBLE_COMPLEX, 0, 0, 0, 0, 0, 0},
    {MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", FY_B_C_LONG_DOUBLE_COMPLEX, 0, 0, 0, 0, 0, 0},
    /* Fortran types a C program may still name, mapped to the C type of
     * the same representation (gfortran's). */
    {MPI_CHARACTER, "MPI_CHARACTER", FY_B_CHAR, 0, 0, 0, 0, 0, 0},
    {MPI_INTEGER, "MPI_INTEGER", FY_B_INT, 0, 0, 0, 0, 0, 0},
    {MPI_REAL, "MPI_REAL", FY_B_FLOAT, 0, 0, 0, 0, 0, 0},
    {MPI_LOGICAL, "MPI_LOGICAL", FY_B_INT, 0, 0, 0, 0, 0, 0},
    {MPI_COMPLEX, "MPI_COMPLEX", FY_B_C_FLOAT_COMPLEX, 0, 0, 0, 0, 0, 0},
    {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", FY_B_DOUBLE, 0, 0, 0, 0, 0, 0},
    {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", FY_B_C_DOUBLE_COMPLEX, 0, 0, 0, 0, 0, 0},
    {MPI_REAL4, "MPI_REAL4", FY_B_FLOAT, 0, 0, 0, 0, 0, 0},
    {MPI_REAL8, "MPI_REAL8", FY_B_DOUBLE, 0, 0, 0, 0, 0, 0},
    {MPI_COMPLEX8, "MPI_COMPLEX8", FY_B_C_FLOAT_COMPLEX, 0, 0, 0, 0, 0, 0},
    {MPI_COMPLEX16, "MPI_COMPLEX16", FY_B_C_DOUBLE_COMPLEX, 0, 0, 0, 0, 0, 0},
    {MPI_INTEGER1, "MPI_INTEGER1", FY_B_INT8, 0, 0, 0, 0, 0, 0},
    {MPI_INTEGER2, "MPI_INTEGER2", FY_B_INT16, 0, 0, 0, 0, 0, 0},
    {MPI_INTEGER4, "MPI_INTEGER4", FY_B_INT32, 0, 0, 0, 0, 0, 0},
    {MPI_INTEGER8, "MPI_INTEGER8", FY_B_INT64, 0, 0, 0, 0, 0, 0},
    /* Pairs for MINLOC/MAXLOC. The first five have "direct" handles
     * (0x8c00000N) and must occupy indices 0-4 of the handle table. */
    {MPI_FLOAT_INT, "MPI_FLOAT_INT", NONE, FY_PAIR_FLOAT_INT, PAIR(pair_fi, FY_B_FLOAT, FY_B_INT)},
    {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", NONE, FY_PAIR_DOUBLE_INT, PAIR(pair_di, FY_B_DOUBLE, FY_B_INT)},
    {MPI_LONG_INT, "MPI_LONG_INT", NONE, FY_PAIR_LONG_INT, PAIR(pair_li, FY_B_LONG, FY_B_INT)},
    {MPI_SHORT_INT, "MPI_SHORT_INT", NONE, FY_PAIR_SHORT_INT, PAIR(pair_si, FY_B_SHORT, FY_B_INT)},
    {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", NONE, FY_PAIR_LONG_DOUBLE_INT, PAIR(pair_ldi, FY_B_LONG_DOUBLE, FY_B_INT)},
    {MPI_2INT, "MPI_2INT", NONE, FY_PAIR_2INT, PAIR(pair_ii, FY_B_INT, FY_B_INT)},
    {MPI_2INTEGER, "MPI_2INTEGER", NONE, FY_PAIR_2INT, PAIR(pair_ii, FY_B_INT, FY_B_INT)},
    {MPI_2REAL, "MPI_2REAL", NONE, FY_PAIR_2FLOAT, PAIR(pair_ff, FY_B_FLOAT, FY_B_FLOAT)},
    {MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", NONE, FY_PAIR_2DOUBLE, PAIR(pair_dd, FY_B_DOUBLE, FY_B_DOUBLE)},
};
#define NBUILTIN FY_ARRAY_LEN(builtin_descs)
/* clang-format on */

static struct fy_dtype builtin_objs[NBUILTIN];
static struct fy_dtype_seg builtin_segs[NBUILTIN][2];
/* Builtin-kind handles (0x4c00ssii) by their low byte 'ii'. */
static struct fy_dtype *builtin_by_index[256];

static struct fy_handle_table dtype_table =
    FY_HANDLE_TABLE_INIT(FY_HT_DATATYPE);
static bool dtype_ready;

/* Fill the derived fields of a type whose segs, rep, bounds are set. */
static void finish_layout(struct fy_dtype *dt)
{
    MPI_Count size = 0, nbasic = 0;
    bool packed_order = true; /* segments tile [0, size of one rep) */
    for (uint32_t s = 0; s < dt->nsegs; s++) {
        const struct fy_dtype_seg *g = &dt->segs[s];
        if (g->disp != size)
            packed_order = false;
        size += g->count * (MPI_Count)fy_basic_tab[g->basic].size;
        nbasic += g->count;
    }
    dt->size = size * dt->rep;
    dt->nbasic = nbasic * dt->rep;
    if (dt->rep > 1 && dt->rep_stride != size)
        packed_order = false;
    dt->contig = packed_order && dt->extent == dt->size;
}

/* A predefined type per basic type (the first in the table with it), for
 * fy_dtype_single_basic. */
static struct fy_dtype *builtin_by_basic[FY_B_COUNT_OF];

static int builtins_setup(void)
{
    memset(builtin_by_index, 0, sizeof(builtin_by_index));
    memset(builtin_by_basic, 0, sizeof(builtin_by_basic));
    for (size_t k = 0; k < NBUILTIN; k++) {
        const struct builtin_desc *d = &builtin_descs[k];
        struct fy_dtype *dt = &builtin_objs[k];
        struct fy_dtype_seg *sg = builtin_segs[k];
        memset(dt, 0, sizeof(*dt));
        dt->handle = d->handle;
        dt->refcount = 1;
        dt->builtin = true;
        dt->committed = true;
        dt->combiner = MPI_COMBINER_NAMED;
        dt->rep = 1;
        dt->segs = sg;
        dt->align = 1;
        snprintf(dt->name, sizeof(dt->name), "%s", d->name);
        if (d->basic != NONE) {
            size_t bs = fy_basic_tab[d->basic].size;
            sg[0] = (struct fy_dtype_seg){0, 1, (uint32_t)d->basic};
            dt->nsegs = 1;
            dt->ub = dt->extent = dt->true_ub = (MPI_Aint)bs;
            dt->align = (int)fy_basic_tab[d->basic].align;
            if (!builtin_by_basic[d->basic])
                builtin_by_basic[d->basic] = dt;
        } else if (d->pair) {
            size_t vs = fy_basic_tab[d->vbasic].size;
            size_t is = fy_basic_tab[d->ibasic].size;
            dt->pair = d->pair;
            sg[0] = (struct fy_dtype_seg){0, 1, (uint32_t)d->vbasic};
            if (d->vbasic == d->ibasic && d->ioff == vs) {
                sg[0].count = 2; /* MPI_2INT and friends: one run */
                dt->nsegs = 1;
            } else {
                sg[1] = (struct fy_dtype_seg){(MPI_Aint)d->ioff, 1,
                                              (uint32_t)d->ibasic};
                dt->nsegs = 2;
            }
            dt->ub = dt->extent = (MPI_Aint)d->psize;
            dt->true_ub = (MPI_Aint)(d->ioff + is);
            dt->align = (int)d->palign;
        } else {
            dt->marker = true; /* MPI_LB / MPI_UB: no data, no extent */
        }
        finish_layout(dt);
        if (fy_handle_kind(d->handle) == FY_HANDLE_KIND_BUILTIN)
            builtin_by_index[(uint32_t)d->handle & 0xff] = dt;
    }
    /* The direct-kind pair handles are indices 0-4 of the table: allocate
     * them first, in index order, so user types never collide with them. */
    for (uint32_t want = 0; want < 5; want++) {
        for (size_t k = 0; k < NBUILTIN; k++) {
            MPI_Datatype h = builtin_descs[k].handle;
            if (fy_handle_kind(h) != FY_HANDLE_KIND_DIRECT ||
                fy_handle_index(h) != want)
                continue;
            int got;
            int rc = fy_handle_alloc(&dtype_table, &builtin_objs[k], &got);
            if (rc)
                return rc;
            if (got != h) {
                FY_ERROR("datatype table not empty at init (0x%x != 0x%x)",
                         (unsigned)got, (unsigned)h);
                return -EINVAL;
            }
        }
    }
    return 0;
}

struct fy_dtype *fy_dtype_single_basic(const struct fy_dtype *dt)
{
    if (dt->pair || dt->nsegs == 0)
        return NULL;
    uint32_t b = dt->segs[0].basic;
    for (uint32_t i = 1; i < dt->nsegs; i++)
        if (dt->segs[i].basic != b)
            return NULL;
    return b < FY_B_COUNT_OF ? builtin_by_basic[b] : NULL;
}

int fy_dtype_init(void)
{
    if (dtype_ready)
        return 0;
    int rc = builtins_setup();
    if (rc)
        return rc;
    rc = fy_op_init();
    if (rc)
        return rc;
    dtype_ready = true;
    return 0;
}

static void dtype_destroy(struct fy_dtype *dt)
{
    fy_dtype_contents_free(dt);
    free(dt->segs);
    free(dt);
}

void fy_dtype_finalize(void)
{
    if (!dtype_ready)
        return;
    /* Types the program never freed die with the library. Every one is in
     * the table, so no type's contents may release another first. */
    for (uint32_t i = 0; i < fy_handle_count(&dtype_table); i++) {
        struct fy_dtype *dt = fy_handle_at(&dtype_table, i);
        if (dt && !dt->builtin && dt->contents)
            dt->contents->nt = 0;
    }
    for (uint32_t i = 0; i < fy_handle_count(&dtype_table); i++) {
        struct fy_dtype *dt = fy_handle_at(&dtype_table, i);
        if (dt && !dt->builtin)
            dtype_destroy(dt);
    }
    fy_handle_table_reset(&dtype_table);
    fy_op_finalize();
    dtype_ready = false;
}

struct fy_dtype *fy_dtype_get(MPI_Datatype h)
{
    if (FY_UNLIKELY(!dtype_ready) && fy_dtype_init() != 0)
        return NULL;
    uint32_t kind = fy_handle_kind(h);
    if (fy_handle_type(h) != FY_HT_DATATYPE)
        return NULL;
    if (kind == FY_HANDLE_KIND_BUILTIN) {
        struct fy_dtype *dt = builtin_by_index[(uint32_t)h & 0xff];
        return dt && dt->handle == h ? dt : NULL;
    }
    struct fy_dtype *dt = fy_handle_get(&dtype_table, h);
    return dt && !dt->freed ? dt : NULL;
}

/* ---- reference counting and handles ------------------------------------ */

int fy_dtype_register(struct fy_dtype *dt)
{
    if (!dtype_ready) {
        int rc = fy_dtype_init();
        if (rc)
            return rc;
    }
    int h;
    int rc = fy_handle_alloc(&dtype_table, dt, &h);
    if (rc)
        return rc;
    dt->handle = h;
    return 0;
}

void fy_dtype_retain(struct fy_dtype *dt)
{
    /* Predefined types are never freed (fy_dtype_release ignores them):
     * no count to keep, and no shared line for threads to write. */
    if (!dt->builtin)
        fy_mt_ref_inc(&dt->refcount);
}

void fy_dtype_release(struct fy_dtype *dt)
{
    if (!dt || dt->builtin)
        return; /* predefined types live as long as the library */
    if (fy_mt_ref_dec(&dt->refcount) > 0)
        return;
    if (dt->handle != MPI_DATATYPE_NULL && dtype_ready)
        fy_handle_release(&dtype_table, dt->handle);
    dtype_destroy(dt);
}

void fy_dtype_free_handle(struct fy_dtype *dt)
{
    if (dt->builtin || dt->freed)
        return;
    /* Each user handle reference holds one object reference. */
    if (--dt->user_refs <= 0)
        dt->freed = true;
    fy_dtype_release(dt);
}

/* ---- building type maps ------------------------------------------------ */

/* Large enough for any sane type, small enough that a runaway constructor
 * fails with MPI_ERR_NO_MEM-style errors instead of exhausting memory. */
#define MAX_SEGS (1u << 26)

struct builder {
    struct fy_dtype_seg *segs;
    uint32_t n, cap;
};

/* Append one run, merging it into the previous one when it continues it
 * with the same basic type. */
static int b_push(struct builder *b, MPI_Aint disp, MPI_Count count,
                  uint32_t basic)
{
    if (count == 0)
        return 0;
    if (b->n > 0) {
        struct fy_dtype_seg *last = &b->segs[b->n - 1];
        MPI_Aint end =
            last->disp +
            (MPI_Aint)(last->count * (MPI_Count)fy_basic_tab[basic].size);
        if (last->basic == basic && end == disp) {
            last->count += count;
            return 0;
        }
    }
    if (b->n == b->cap) {
        if (b->cap >= MAX_SEGS)
            return -ENOMEM;
        uint32_t ncap = b->cap ? b->cap * 2 : 8;
        struct fy_dtype_seg *ns = realloc(b->segs, ncap * sizeof(*ns));
        if (!ns)
            return -ENOMEM;
        b->segs = ns;
        b->cap = ncap;
    }
    b->segs[b->n++] = (struct fy_dtype_seg){disp, count, basic};
    return 0;
}

/* Append 'n' consecutive elements of 'old' (element j at disp + j *
 * old->extent), expanding old's own repetition. */
static int b_append(struct builder *b, const struct fy_dtype *old,
                    MPI_Aint disp, MPI_Count n)
{
    if (old->size == 0 || n == 0)
        return 0;
    /* A single run that tiles its extent: n elements are one longer run. */
    if (old->nsegs == 1 && old->rep == 1 && old->segs[0].disp == 0 &&
        old->extent == old->size)
        return b_push(b, disp, n * old->segs[0].count, old->segs[0].basic);
    for (MPI_Count j = 0; j < n; j++) {
        MPI_Aint base = disp + (MPI_Aint)j * old->extent;
        for (MPI_Count r = 0; r < old->rep; r++) {
            MPI_Aint rb = base + (MPI_Aint)r * old->rep_stride;
            for (uint32_t s = 0; s < old->nsegs; s++) {
                const struct fy_dtype_seg *g = &old->segs[s];
                int rc = b_push(b, rb + g->disp, g->count, g->basic);
                if (rc)
                    return rc;
            }
        }
    }
    return 0;
}

/* Running bounds of a type under construction. */
struct bounds {
    bool any, any_true;
    bool overflow; /* a bound left MPI_Aint's range: the type is refused */
    MPI_Aint lb, ub, tlb, tub;
    int align;
    bool all_explicit; /* every block's type had explicit bounds */
    int pair;          /* common pair kind of all blocks, or -1 if mixed */
};

static void bounds_init(struct bounds *bd)
{
    *bd = (struct bounds){.align = 1, .all_explicit = true, .pair = -2};
}

/* Account for n > 0 elements of 'old' starting at 'disp'. */
static void bounds_add(struct bounds *bd, const struct fy_dtype *old,
                       MPI_Aint disp, MPI_Count n)
{
    /* Displacements and counts come from the user: a bound that leaves
     * MPI_Aint's range refuses the type (dt_make) instead of wrapping. */
    MPI_Aint span, lo, hi, lb, ub, tlb = 0, tub = 0;
    if (__builtin_mul_overflow((MPI_Aint)(n - 1), old->extent, &span) ||
        __builtin_add_overflow(disp, span < 0 ? span : 0, &lo) ||
        __builtin_add_overflow(disp, span > 0 ? span : 0, &hi) ||
        __builtin_add_overflow(lo, old->lb, &lb) ||
        __builtin_add_overflow(hi, old->ub, &ub) ||
        __builtin_add_overflow(lo, old->true_lb, &tlb) ||
        __builtin_add_overflow(hi, old->true_ub, &tub)) {
        bd->overflow = true;
        return;
    }
    if (!bd->any || lb < bd->lb)
        bd->lb = lb;
    if (!bd->any || ub > bd->ub)
        bd->ub = ub;
    bd->any = true;
    if (old->size > 0) {
        if (!bd->any_true || tlb < bd->tlb)
            bd->tlb = tlb;
        if (!bd->any_true || tub > bd->tub)
            bd->tub = tub;
        bd->any_true = true;
    }
    if (old->align > bd->align)
        bd->align = old->align;
    if (!old->explicit_bounds)
        bd->all_explicit = false;
    if (bd->pair == -2)
        bd->pair = old->pair;
    else if (bd->pair != old->pair)
        bd->pair = -1;
}

static struct fy_dtype *dt_alloc(int combiner)
{
    struct fy_dtype *dt = calloc(1, sizeof(*dt));
    if (!dt)
        return NULL;
    dt->handle = MPI_DATATYPE_NULL;
    dt->refcount = 1;
    dt->user_refs = 1;
    dt->combiner = combiner;
    dt->rep = 1;
    dt->align = 1;
    return dt;
}

/* Turn a builder and bounds into a type object (takes the builder's
 * segments). */
static int dt_make(struct builder *b, const struct bounds *bd, int combiner,
                   MPI_Count rep, MPI_Aint rep_stride, struct fy_dtype **out)
{
    MPI_Aint ext;
    if (bd->overflow ||
        (bd->any && __builtin_sub_overflow(bd->ub, bd->lb, &ext)) ||
        (bd->any_true && __builtin_sub_overflow(bd->tub, bd->tlb, &ext))) {
        free(b->segs);
        return -ERANGE;
    }
    struct fy_dtype *dt = dt_alloc(combiner);
    if (!dt) {
        free(b->segs);
        return -ENOMEM;
    }
    if (b->n > 0 && b->n < b->cap) {
        struct fy_dtype_seg *shrunk = realloc(b->segs, b->n * sizeof(*shrunk));
        if (shrunk)
            b->segs = shrunk;
    }
    dt->segs = b->segs;
    dt->nsegs = b->n;
    b->segs = NULL;
    dt->rep = rep;
    dt->rep_stride = rep_stride;
    if (bd->any) {
        dt->lb = bd->lb;
        dt->ub = bd->ub;
    }
    if (bd->any_true) {
        dt->true_lb = bd->tlb;
        dt->true_ub = bd->tub;
    }
    dt->extent = dt->ub - dt->lb;
    dt->align = bd->align;
    dt->pair = bd->pair > 0 ? bd->pair : 0;
    dt->explicit_bounds = bd->any && bd->all_explicit;
    finish_layout(dt);
    *out = dt;
    return 0;
}

/* count blocks of blocklen elements of old, block i at i * stride bytes:
 * the shape of contiguous, vector and hvector. The type map stores one
 * block and repeats it. */
static int make_strided(MPI_Count count, MPI_Count blocklen, MPI_Aint stride,
                        struct fy_dtype *old, int combiner,
                        struct fy_dtype **out)
{
    if (count < 0 || blocklen < 0 || !old)
        return -EINVAL;
    MPI_Count total;
    if (__builtin_mul_overflow(count, blocklen, &total) ||
        __builtin_mul_overflow(total, old->size, &total))
        return -EOVERFLOW;
    struct builder b = {0};
    struct bounds bd;
    bounds_init(&bd);
    MPI_Count rep = 1;
    MPI_Aint rep_stride = 0;
    int rc = 0;
    if (count > 0 && blocklen > 0) {
        rc = b_append(&b, old, 0, blocklen);
        if (rc == 0 && count > 1) {
            /* One block that is a single run continued by the next block
             * merges into one run; otherwise repeat the block. */
            MPI_Count bsize = blocklen * old->size;
            if (b.n == 1 && b.segs[0].disp == 0 && stride == bsize) {
                b.segs[0].count *= count;
            } else if (b.n > 0) {
                rep = count;
                rep_stride = stride;
            }
        }
        bounds_add(&bd, old, 0, blocklen);
        MPI_Aint last;
        if (count > 1 &&
            __builtin_mul_overflow((MPI_Aint)(count - 1), stride, &last))
            bd.overflow = true;
        else if (count > 1)
            bounds_add(&bd, old, last, blocklen);
    }
    if (rc) {
        free(b.segs);
        return rc;
    }
    return dt_make(&b, &bd, combiner, rep, rep_stride, out);
}

int fy_dtype_contiguous(MPI_Count count, struct fy_dtype *old,
                        struct fy_dtype **out)
{
    if (!old)
        return -EINVAL;
    return make_strided(count, 1, old->extent, old, MPI_COMBINER_CONTIGUOUS,
                        out);
}

int fy_dtype_vector(MPI_Count count, MPI_Count blocklen, MPI_Aint stride_bytes,
                    struct fy_dtype *old, int combiner, struct fy_dtype **out)
{
    return make_strided(count, blocklen, stride_bytes, old, combiner, out);
}

int fy_dtype_indexed(MPI_Count count, const MPI_Count *blocklens,
                     const MPI_Aint *disps_bytes, struct fy_dtype *old,
                     int combiner, struct fy_dtype **out)
{
    if (count < 0 || !old || (count > 0 && (!blocklens || !disps_bytes)))
        return -EINVAL;
    struct builder b = {0};
    struct bounds bd;
    bounds_init(&bd);
    MPI_Count total = 0;
    for (MPI_Count i = 0; i < count; i++) {
        if (blocklens[i] < 0) {
            free(b.segs);
            return -EINVAL;
        }
        if (blocklens[i] == 0)
            continue; /* empty blocks do not move the bounds */
        MPI_Count bytes;
        if (__builtin_mul_overflow(blocklens[i], old->size, &bytes) ||
            __builtin_add_overflow(total, bytes, &total)) {
            free(b.segs);
            return -EOVERFLOW;
        }
        int rc = b_append(&b, old, disps_bytes[i], blocklens[i]);
        if (rc) {
            free(b.segs);
            return rc;
        }
        bounds_add(&bd, old, disps_bytes[i], blocklens[i]);
    }
    return dt_make(&b, &bd, combiner, 1, 0, out);
}

int fy_dtype_struct(MPI_Count count, const MPI_Count *blocklens,
                    const MPI_Aint *disps, struct fy_dtype *const *types,
                    struct fy_dtype **out)
{
    if (count < 0 || (count > 0 && (!blocklens || !disps || !types)))
        return -EINVAL;
    struct builder b = {0};
    struct bounds bd;
    bounds_init(&bd);
    /* MPI_LB / MPI_UB markers override the computed bound (MPI-1). */
    bool have_lb = false, have_ub = false;
    MPI_Aint mlb = 0, mub = 0;
    MPI_Count total = 0;
    for (MPI_Count i = 0; i < count; i++) {
        const struct fy_dtype *t = types[i];
        if (!t || blocklens[i] < 0) {
            free(b.segs);
            return -EINVAL;
        }
        if (t->marker) {
            bool is_lb = t->handle == MPI_LB;
            if (is_lb && (!have_lb || disps[i] < mlb))
                mlb = disps[i];
            if (!is_lb && (!have_ub || disps[i] > mub))
                mub = disps[i];
            if (is_lb)
                have_lb = true;
            else
                have_ub = true;
            continue;
        }
        if (blocklens[i] == 0)
            continue;
        MPI_Count bytes;
        if (__builtin_mul_overflow(blocklens[i], t->size, &bytes) ||
            __builtin_add_overflow(total, bytes, &total)) {
            free(b.segs);
            return -EOVERFLOW;
        }
        int rc = b_append(&b, t, disps[i], blocklens[i]);
        if (rc) {
            free(b.segs);
            return rc;
        }
        bounds_add(&bd, t, disps[i], blocklens[i]);
    }
    struct bounds fin = bd;
    if (have_lb)
        fin.lb = mlb;
    if (have_ub)
        fin.ub = mub;
    if (have_lb || have_ub) {
        if (!bd.any) {
            /* Only markers: the missing bound defaults to the other. */
            if (!have_lb)
                fin.lb = fin.ub;
            if (!have_ub)
                fin.ub = fin.lb;
        }
        fin.any = true;
        fin.all_explicit = true;
    } else if (bd.any && count > 1 && !bd.all_explicit) {
        /* MPI's "epsilon": pad the extent to a multiple of the strictest
         * alignment, as a C compiler pads a struct, so that count > 1
         * steps over whole C structs. Like MPICH, a struct of one block
         * is not padded, nor one made only of resized types. */
        MPI_Aint ext;
        if (__builtin_sub_overflow(fin.ub, fin.lb, &ext)) {
            fin.overflow = true;
        } else {
            MPI_Aint rem = ext % fin.align;
            if (rem != 0 &&
                __builtin_add_overflow(
                    fin.ub, fin.align - (rem < 0 ? rem + fin.align : rem),
                    &fin.ub))
                fin.overflow = true;
        }
    }
    return dt_make(&b, &fin, MPI_COMBINER_STRUCT, 1, 0, out);
}

static int dt_copy(const struct fy_dtype *old, int combiner,
                   struct fy_dtype **out)
{
    struct fy_dtype *dt = dt_alloc(combiner);
    if (!dt)
        return -ENOMEM;
    dt->segs = NULL;
    if (old->nsegs > 0) {
        dt->segs = malloc(old->nsegs * sizeof(*dt->segs));
        if (!dt->segs) {
            free(dt);
            return -ENOMEM;
        }
        memcpy(dt->segs, old->segs, old->nsegs * sizeof(*dt->segs));
    }
    dt->nsegs = old->nsegs;
    dt->rep = old->rep;
    dt->rep_stride = old->rep_stride;
    dt->lb = old->lb;
    dt->ub = old->ub;
    dt->extent = old->extent;
    dt->true_lb = old->true_lb;
    dt->true_ub = old->true_ub;
    dt->align = old->align;
    dt->pair = old->pair;
    dt->explicit_bounds = old->explicit_bounds;
    dt->marker = false;
    finish_layout(dt);
    *out = dt;
    return 0;
}

int fy_dtype_resized(struct fy_dtype *old, MPI_Aint lb, MPI_Aint extent,
                     struct fy_dtype **out)
{
    if (!old)
        return -EINVAL;
    MPI_Aint ub;
    if (__builtin_add_overflow(lb, extent, &ub))
        return -ERANGE;
    struct fy_dtype *dt;
    int rc = dt_copy(old, MPI_COMBINER_RESIZED, &dt);
    if (rc)
        return rc;
    dt->lb = lb;
    dt->extent = extent;
    dt->ub = ub;
    dt->explicit_bounds = true;
    finish_layout(dt);
    *out = dt;
    return 0;
}

int fy_dtype_dup(struct fy_dtype *old, struct fy_dtype **out)
{
    if (!old)
        return -EINVAL;
    struct fy_dtype *dt;
    int rc = dt_copy(old, MPI_COMBINER_DUP, &dt);
    if (rc)
        return rc;
    /* A dup of a predefined type is a committed derived type. */
    dt->committed = old->committed || old->builtin;
    *out = dt;
    return 0;
}

struct fy_dtype *fy_dtype_elem_type(const struct fy_dtype *dt)
{
    if (dt->builtin)
        return (struct fy_dtype *)dt;
    if (dt->nsegs == 0)
        return NULL;
    if (!dt->pair)
        for (uint32_t s = 1; s < dt->nsegs; s++)
            if (dt->segs[s].basic != dt->segs[0].basic)
                return NULL;
    for (size_t k = 0; k < NBUILTIN; k++) {
        const struct builtin_desc *d = &builtin_descs[k];
        if (dt->pair ? d->pair == dt->pair
                     : !d->pair && d->basic == (int)dt->segs[0].basic)
            return &builtin_objs[k];
    }
    return NULL;
}
