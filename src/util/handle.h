/* SPDX-License-Identifier: MIT */
/* Handle tables: MPI handles are ints laid out as MPICH lays them out
 * (kind in bits 30-31, object type in bits 26-29, index below), so values
 * compiled into MPICH binaries keep their meaning. Predefined objects are
 * "builtin" handles (kind 01) resolved by each module; objects created at run
 * time get "direct" handles (kind 10) from these tables. Not thread safe:
 * callers hold the big lock when MPI_THREAD_MULTIPLE is ever provided. */
#ifndef FY_HANDLE_H
#define FY_HANDLE_H

#include <stddef.h>
#include <stdint.h>

#define FY_HANDLE_KIND_MASK 0xc0000000u
#define FY_HANDLE_KIND_INVALID 0x00000000u
#define FY_HANDLE_KIND_BUILTIN 0x40000000u
#define FY_HANDLE_KIND_DIRECT 0x80000000u
#define FY_HANDLE_TYPE_MASK 0x3c000000u
#define FY_HANDLE_INDEX_MASK 0x03ffffffu

/* MPICH object type numbers (bits 26-29). */
enum fy_handle_type {
    FY_HT_COMM = 0x1,
    FY_HT_GROUP = 0x2,
    FY_HT_DATATYPE = 0x3,
    FY_HT_FILE = 0x4,
    FY_HT_ERRHANDLER = 0x5,
    FY_HT_OP = 0x6,
    FY_HT_INFO = 0x7,
    FY_HT_WIN = 0x8,
    FY_HT_KEYVAL = 0x9,
    FY_HT_ATTR = 0xa,
    FY_HT_REQUEST = 0xb,
    FY_HT_SESSION = 0xe,
};

static inline uint32_t fy_handle_kind(int h)
{
    return (uint32_t)h & FY_HANDLE_KIND_MASK;
}
static inline enum fy_handle_type fy_handle_type(int h)
{
    return (enum fy_handle_type)(((uint32_t)h & FY_HANDLE_TYPE_MASK) >> 26);
}
static inline uint32_t fy_handle_index(int h)
{
    return (uint32_t)h & FY_HANDLE_INDEX_MASK;
}

struct fy_handle_table {
    enum fy_handle_type type;
    void **objs;    /* index -> object, NULL when free */
    uint32_t cap;   /* slots allocated */
    uint32_t used;  /* high-water mark */
    uint32_t *free; /* stack of freed indices */
    uint32_t nfree;
};

#define FY_HANDLE_TABLE_INIT(t)                                                \
    {                                                                          \
        .type = (t)                                                            \
    }

/* Store obj and return its new direct handle in *handle_out. Returns 0 or
 * -ENOMEM. */
int fy_handle_alloc(struct fy_handle_table *t, void *obj, int *handle_out);
/* The object behind a direct handle of this table's type, or NULL. */
static inline void *fy_handle_get(const struct fy_handle_table *t, int handle)
{
    if (fy_handle_kind(handle) != FY_HANDLE_KIND_DIRECT ||
        fy_handle_type(handle) != t->type)
        return NULL;
    uint32_t idx = fy_handle_index(handle);
    if (idx >= t->used)
        return NULL;
    return t->objs[idx];
}
/* Forget a handle (the object itself is the caller's to free). */
void fy_handle_release(struct fy_handle_table *t, int handle);

#endif /* FY_HANDLE_H */
