/* SPDX-License-Identifier: MIT */
/* Accumulates and compare-and-swap on windows whose memory is in shared
 * mappings (MPI_Win_allocate, MPI_Win_allocate_shared, MPI_Win_create
 * memory moved by remap.c): one hardware atomic
 * per element where the element allows it, the target's accumulate lock
 * only for the elements that do not. No staging copies, no lock word and
 * no wake-up on the common path (a counter, Fetch_and_op, CAS).
 *
 * Invariants (the accumulate discipline; every rank applies the same rule,
 * which depends only on things all ranks agree on: the window's flavor,
 * the element's basic type and its offset in the memfd, page-aligned in
 * every mapping):
 * - A1: on a window in the shared mapping, an element of a basic type of
 *   1, 2, 4 or 8 bytes at an address aligned to its size, accessed through
 *   a target datatype that is not a value-index pair type, is only ever
 *   read-modified-written by one hardware atomic (fetch-add/and/or/xor,
 *   exchange, store, load, or a compare-and-swap loop around the op's
 *   kernel), by every path: Accumulate, Get_accumulate, Fetch_and_op,
 *   Compare_and_swap, predefined or derived types, any count. Such an
 *   element is never combined under the accumulate lock.
 * - A2: every other element (long double and the complex types over 8
 *   bytes, a misaligned element, the pairs of MINLOC/MAXLOC types) is
 *   only ever combined with plain loads and stores while holding
 *   slot[target].acc (C1/C2 in win.c); the lock is taken lazily, at the
 *   first such element of an operation, and held to its end.
 * - A3: a run of elements narrower than 8 bytes may be combined one
 *   aligned 8-byte word at a time, by one 64-bit atomic on a word that
 *   holds only elements of the run. Still one atomic per element: the
 *   hardware (x86-64, AArch64) makes naturally aligned atomics of
 *   different sizes on overlapping bytes atomic with each other, so a
 *   byte's fetch-add by another origin lands either before the word's
 *   compare-and-swap (which then fails and retries) or after it.
 * - So two operations that MPI requires to be atomic with each other on
 *   one location (same basic type, any mix of ops including MPI_REPLACE,
 *   MPI_NO_OP and compare-and-swap) always use the same one of A1 / A2 for
 *   it. Windows on user memory that is not shared (dynamic, and
 *   MPI_Win_create where remap.c did not move it for every member: M4)
 *   use A2 for every element, including a rank's accumulates to itself;
 *   Win_create memory it moved is in shared mappings like the others.
 * - Memory order: the atomics are relaxed. Atomicity needs no ordering;
 *   completion (flush, unlock, fence, complete) is a seq_cst fence in
 *   win.c, and the accesses of one origin to one location are ordered by
 *   coherence, which is what MPI's default accumulate_ordering asks. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "rma/rma.h"
#include "util/util.h"

/* How one element is combined. */
enum elem_kind {
    K_LOAD,  /* MPI_NO_OP */
    K_STORE, /* MPI_REPLACE */
    K_ADD,   /* MPI_SUM on integers */
    K_AND,   /* MPI_BAND on integers and bytes */
    K_OR,
    K_XOR,
    K_CAS, /* anything else: compare-and-swap around the op's kernel */
};

static enum elem_kind elem_kind(const struct fy_op *op, uint32_t b)
{
    MPI_Op h = op->handle;
    if (h == MPI_NO_OP)
        return K_LOAD;
    if (h == MPI_REPLACE)
        return K_STORE;
    bool bits = fy_basic_is_int(b) || b == FY_B_BYTE;
    if (h == MPI_SUM && fy_basic_is_int(b))
        return K_ADD; /* two's complement: wraps like the kernel */
    if (h == MPI_BAND && bits)
        return K_AND;
    if (h == MPI_BOR && bits)
        return K_OR;
    if (h == MPI_BXOR && bits)
        return K_XOR;
    return K_CAS;
}

/* A1's test: whether the element at 'a' is combined by a hardware atomic. */
static bool elem_atomic(uint32_t b, uintptr_t a)
{
    size_t sz = fy_basic_size((enum fy_basic)b);
    return (sz == 1 || sz == 2 || sz == 4 || sz == 8) && a % sz == 0;
}

/* n aligned elements of width T at 'a': old values to 'old' (if set), 'in'
 * combined in (unused for K_LOAD). One atomic per element (A1). */
#define ELEM_FN(NAME, T)                                                       \
    static void NAME(const struct fy_op *op, uint32_t b, enum elem_kind k,     \
                     char *a, MPI_Count n, const char *in, char *old)          \
    {                                                                          \
        _Atomic T *p = (_Atomic T *)(void *)a;                                 \
        for (MPI_Count i = 0; i < n; i++, p++) {                               \
            T v = 0, o;                                                        \
            if (k != K_LOAD)                                                   \
                memcpy(&v, in + i * (MPI_Count)sizeof(T), sizeof(T));          \
            switch (k) {                                                       \
            case K_LOAD:                                                       \
                o = atomic_load_explicit(p, memory_order_relaxed);             \
                break;                                                         \
            case K_STORE:                                                      \
                if (!old) {                                                    \
                    atomic_store_explicit(p, v, memory_order_relaxed);         \
                    continue;                                                  \
                }                                                              \
                o = atomic_exchange_explicit(p, v, memory_order_relaxed);      \
                break;                                                         \
            case K_ADD:                                                        \
                o = atomic_fetch_add_explicit(p, v, memory_order_relaxed);     \
                break;                                                         \
            case K_AND:                                                        \
                o = atomic_fetch_and_explicit(p, v, memory_order_relaxed);     \
                break;                                                         \
            case K_OR:                                                         \
                o = atomic_fetch_or_explicit(p, v, memory_order_relaxed);      \
                break;                                                         \
            case K_XOR:                                                        \
                o = atomic_fetch_xor_explicit(p, v, memory_order_relaxed);     \
                break;                                                         \
            default:                                                           \
                o = atomic_load_explicit(p, memory_order_relaxed);             \
                for (;;) {                                                     \
                    T nv = o;                                                  \
                    fy_op_apply_basic(op, b, &v, &nv, 1);                      \
                    /* Unchanged (MAX that loses): the load was the RMW. */    \
                    if (nv == o || atomic_compare_exchange_weak_explicit(      \
                                       p, &o, nv, memory_order_relaxed,        \
                                       memory_order_relaxed))                  \
                        break;                                                 \
                }                                                              \
                break;                                                         \
            }                                                                  \
            if (old)                                                           \
                memcpy(old + i * (MPI_Count)sizeof(T), &o, sizeof(T));         \
        }                                                                      \
    }

ELEM_FN(elem_u8, uint8_t)
ELEM_FN(elem_u16, uint16_t)
ELEM_FN(elem_u32, uint32_t)
ELEM_FN(elem_u64, uint64_t)

static void elem_each(const struct fy_op *op, uint32_t b, enum elem_kind k,
                      size_t sz, char *a, MPI_Count n, const char *in,
                      char *old)
{
    if (n <= 0)
        return;
    switch (sz) {
    case 1:
        elem_u8(op, b, k, a, n, in, old);
        break;
    case 2:
        elem_u16(op, b, k, a, n, in, old);
        break;
    case 4:
        elem_u32(op, b, k, a, n, in, old);
        break;
    default:
        elem_u64(op, b, k, a, n, in, old);
        break;
    }
}

/* Lane-wise sum of the 1, 2 or 4-byte integers packed in x and y (hi: the
 * top bit of each lane), wrapping within each lane as the kernel does:
 * add the low bits without carries out of a lane, then the top bits. */
static inline uint64_t lanes_add(uint64_t x, uint64_t y, uint64_t hi)
{
    return ((x & ~hi) + (y & ~hi)) ^ ((x ^ y) & hi);
}

/* A3: nw aligned 8-byte words, each holding 8 / sz whole elements of the
 * run, each combined by one 64-bit atomic (bitwise ops and loads/stores
 * directly, the rest by a compare-and-swap around the op's kernel applied
 * to the word's elements). */
static void word_run(const struct fy_op *op, uint32_t b, enum elem_kind k,
                     size_t sz, char *a, MPI_Count nw, const char *in,
                     char *old)
{
    _Atomic uint64_t *p = (_Atomic uint64_t *)(void *)a;
    MPI_Count per = (MPI_Count)(8 / sz);
    uint64_t hi = sz == 1   ? 0x8080808080808080ull
                  : sz == 2 ? 0x8000800080008000ull
                            : 0x8000000080000000ull;
    for (MPI_Count i = 0; i < nw; i++, p++) {
        uint64_t v = 0, o;
        if (k != K_LOAD)
            memcpy(&v, in + 8 * i, 8);
        switch (k) {
        case K_LOAD:
            o = atomic_load_explicit(p, memory_order_relaxed);
            break;
        case K_STORE:
            if (!old) {
                atomic_store_explicit(p, v, memory_order_relaxed);
                continue;
            }
            o = atomic_exchange_explicit(p, v, memory_order_relaxed);
            break;
        case K_AND:
            o = atomic_fetch_and_explicit(p, v, memory_order_relaxed);
            break;
        case K_OR:
            o = atomic_fetch_or_explicit(p, v, memory_order_relaxed);
            break;
        case K_XOR:
            o = atomic_fetch_xor_explicit(p, v, memory_order_relaxed);
            break;
        case K_ADD:
            o = atomic_load_explicit(p, memory_order_relaxed);
            while (!atomic_compare_exchange_weak_explicit(
                p, &o, lanes_add(o, v, hi), memory_order_relaxed,
                memory_order_relaxed))
                ;
            break;
        default:
            o = atomic_load_explicit(p, memory_order_relaxed);
            for (;;) {
                uint64_t nv = o;
                fy_op_apply_basic(op, b, &v, &nv, per);
                if (nv == o ||
                    atomic_compare_exchange_weak_explicit(
                        p, &o, nv, memory_order_relaxed, memory_order_relaxed))
                    break;
            }
            break;
        }
        if (old)
            memcpy(old + 8 * i, &o, 8);
    }
}

/* n aligned elements of basic type b at a (A1): elements narrower than 8
 * bytes one by one up to the first 8-byte boundary, then word by word
 * (A3), then the tail one by one. */
static void elem_run(const struct fy_op *op, uint32_t b, char *a, MPI_Count n,
                     const char *in, char *old)
{
    enum elem_kind k = elem_kind(op, b);
    size_t sz = fy_basic_size((enum fy_basic)b);
    if (sz < 8 && n * (MPI_Count)sz >= 8) {
        MPI_Count head = (MPI_Count)((-(uintptr_t)a & 7) >> (sz == 4   ? 2
                                                             : sz == 2 ? 1
                                                                       : 0));
        head = FY_MIN(head, n);
        if (head)
            elem_each(op, b, k, sz, a, head, in, old);
        MPI_Count skip = head * (MPI_Count)sz,
                  nw = (n - head) * (MPI_Count)sz / 8;
        a += skip;
        in = in ? in + skip : NULL;
        old = old ? old + skip : NULL;
        n -= head;
        if (nw > 0) {
            word_run(op, b, k, sz, a, nw, in, old);
            a += 8 * nw;
            in = in ? in + 8 * nw : NULL;
            old = old ? old + 8 * nw : NULL;
            n -= nw * (MPI_Count)(8 / sz);
        }
    }
    if (n)
        elem_each(op, b, k, sz, a, n, in, old);
}

/* n elements of basic type b at a, packed offset off, len bytes. */
struct run {
    uint32_t b;
    char *a;
    MPI_Count n, len, off;
};

static void run_do(struct fy_rma_win *w, int target, const struct fy_op *op,
                   const struct run *run, const char *in, char *old,
                   bool *locked)
{
    if (run->n <= 0 || run->b == UINT32_MAX)
        return;
    bool no_op = op->handle == MPI_NO_OP;
    if (elem_atomic(run->b, (uintptr_t)run->a)) {
        elem_run(op, run->b, run->a, run->n, in ? in + run->off : NULL,
                 old ? old + run->off : NULL);
        return;
    }
    if (!*locked) { /* A2 */
        fy_rma_acc_lock(w, target);
        *locked = true;
    }
    if (old)
        memcpy(old + run->off, run->a, (size_t)run->len);
    if (!no_op)
        fy_op_apply_basic(op, run->b, in + run->off, run->a, run->n);
}

/* Operations up to this many bytes stage packed data on the stack. */
#define STACK_BYTES 256

int fy_rma_acc_shm(struct fy_rma_win *w, const void *obuf, MPI_Count ocount,
                   struct fy_dtype *odt, void *rbuf, MPI_Count rcount,
                   struct fy_dtype *rdt, int target, uint64_t taddr,
                   MPI_Count tcount, struct fy_dtype *tdt, struct fy_op *op)
{
    MPI_Count bytes = tcount * tdt->size;
    bool no_op = op->handle == MPI_NO_OP;
    char in_stack[STACK_BYTES], old_stack[STACK_BYTES];
    char *in_heap = NULL, *old_heap = NULL;
    /* The origin's data and the old values in packed order (the target
     * type's element order); user buffers are used as they are when
     * they are already laid out that way. */
    const char *in = NULL;
    if (!no_op) {
        if (fy_rma_flat(ocount, odt, bytes)) {
            in = obuf;
        } else {
            char *t = bytes <= STACK_BYTES ? in_stack
                                           : (in_heap = malloc((size_t)bytes));
            if (!t)
                return -ENOMEM;
            fy_dtype_pack(obuf, ocount, odt, t);
            in = t;
        }
    }
    char *old = NULL;
    bool rflat = rbuf && fy_rma_flat(rcount, rdt, bytes);
    if (rbuf) {
        old = rflat                  ? rbuf
              : bytes <= STACK_BYTES ? old_stack
                                     : (old_heap = malloc((size_t)bytes));
        if (!old) {
            free(in_heap);
            return -ENOMEM;
        }
    }
    /* Runs of one basic type that follow each other in memory (every
     * element of a contiguous type) are merged, so that narrow elements
     * go word by word (A3). */
    struct run run = {.b = UINT32_MAX};
    bool locked = false;
    MPI_Count off = 0;
    if (tdt->contig && tdt->nsegs == 1) {
        /* One run (a predefined type, a contiguous one): no walk. */
        uint32_t b = tdt->segs[0].basic;
        run = (struct run){b, (char *)(uintptr_t)taddr + tdt->segs[0].disp,
                           bytes / (MPI_Count)fy_basic_size((enum fy_basic)b),
                           bytes, 0};
        tcount = 0;
    }
    for (MPI_Count i = 0; i < tcount; i++)
        for (MPI_Count r = 0; r < tdt->rep; r++)
            for (uint32_t s = 0; s < tdt->nsegs; s++) {
                const struct fy_dtype_seg *g = &tdt->segs[s];
                char *a = (char *)(uintptr_t)taddr + i * tdt->extent +
                          r * tdt->rep_stride + g->disp;
                MPI_Count len = g->count * (MPI_Count)fy_basic_size(
                                               (enum fy_basic)g->basic);
                if (g->basic == run.b && a == run.a + run.len &&
                    off == run.off + run.len) {
                    run.n += g->count;
                    run.len += len;
                } else {
                    run_do(w, target, op, &run, in, old, &locked);
                    run = (struct run){g->basic, a, g->count, len, off};
                }
                off += len;
            }
    run_do(w, target, op, &run, in, old, &locked);
    if (locked)
        fy_rma_acc_unlock(w, target);
    if (rbuf && !rflat)
        fy_dtype_unpack(old, bytes, rbuf, rcount, rdt);
    if (in_heap || old_heap) {
        free(in_heap);
        free(old_heap);
    }
    return 0;
}

/* count elements of a predefined type (a counter, Fetch_and_op, a short
 * vector): the one run fy_rma_acc_shm would make of them, combined the
 * same way (A1, A3) with no staging and no walk, or -EAGAIN when A1 does
 * not apply (the caller takes fy_rma_acc, which takes the lock: A2). */
int fy_rma_acc_flat_shm(const void *obuf, void *rbuf, uint64_t taddr,
                        MPI_Count count, const struct fy_dtype *dt,
                        const struct fy_op *op)
{
    if (dt->pair || dt->nsegs != 1 || dt->segs[0].disp != 0 || count <= 0)
        return -EAGAIN;
    uint32_t b = dt->segs[0].basic;
    size_t sz = fy_basic_size((enum fy_basic)b);
    if (sz != (size_t)dt->size || !elem_atomic(b, (uintptr_t)taddr))
        return -EAGAIN;
    if (count == 1)
        elem_each(op, b, elem_kind(op, b), sz, (char *)(uintptr_t)taddr, 1,
                  obuf, rbuf);
    else
        elem_run(op, b, (char *)(uintptr_t)taddr, count, obuf, rbuf);
    return 0;
}

int fy_rma_cas_shm(struct fy_rma_win *w, const void *obuf, const void *cbuf,
                   void *rbuf, struct fy_dtype *dt, int target, uint64_t taddr)
{
    (void)w;
    (void)target;
    uint32_t b = dt->segs[0].basic;
    if (dt->pair || dt->nsegs != 1 ||
        fy_basic_size((enum fy_basic)b) != (size_t)dt->size ||
        !elem_atomic(b, (uintptr_t)taddr))
        return -EAGAIN; /* A2: the caller takes the accumulate lock */
#define CAS_CASE(T)                                                            \
    {                                                                          \
        T o, v;                                                                \
        memcpy(&o, cbuf, sizeof(T));                                           \
        memcpy(&v, obuf, sizeof(T));                                           \
        atomic_compare_exchange_strong_explicit((_Atomic T *)(uintptr_t)taddr, \
                                                &o, v, memory_order_relaxed,   \
                                                memory_order_relaxed);         \
        memcpy(rbuf, &o, sizeof(T));                                           \
        return 0;                                                              \
    }
    switch (dt->size) {
    case 1:
        CAS_CASE(uint8_t)
    case 2:
        CAS_CASE(uint16_t)
    case 4:
        CAS_CASE(uint32_t)
    default:
        CAS_CASE(uint64_t)
    }
#undef CAS_CASE
}
