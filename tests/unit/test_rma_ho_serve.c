/* SPDX-License-Identifier: MIT */
/* The target side of the one-sided hand-over (src/rma/ho.c,
 * fy_rma_ho_serve) on forged boxes: a window of user memory with guard
 * bytes on both sides, and a dynamic window with one attached region.
 * Valid puts, gets, accumulates (SUM, REPLACE, NO_OP), get-accumulates and
 * compare-and-swap do what they say; an address outside the window
 * (across its end, before it, wrapping around) is -ERANGE, a kind or size
 * out of range -EPROTO, an op or type the target does not accept -EINVAL -
 * and a refused box writes nothing, anywhere. Runs in one process without
 * MPI_Init. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dtype/dtype.h"
#include "harness.h"
#include "rma/rma.h"
#include "util/util.h"

#define WIN 256
#define GUARD 64

static unsigned char arena[GUARD + WIN + GUARD];
static unsigned char *const win = arena + GUARD;
static unsigned char before[sizeof(arena)];
static struct fy_rma_box box;

static void reset(void)
{
    for (size_t i = 0; i < sizeof(arena); i++)
        arena[i] = (unsigned char)(i * 7 + 1);
    memcpy(before, arena, sizeof(arena));
}

static uint64_t A(size_t off)
{
    return (uint64_t)(uintptr_t)(win + off);
}

static void fill(uint32_t kind, int32_t op, int32_t type, uint64_t addr,
                 uint64_t bytes, const void *data, size_t dlen)
{
    box.kind = kind;
    box.op = op;
    box.type = type;
    box.addr = addr;
    box.bytes = bytes;
    memset(box.data, 0xee, sizeof(box.data));
    if (dlen)
        memcpy(box.data, data, dlen);
}

static void refused(struct fy_rma_win *w, int want, const char *what)
{
    reset();
    TAP_EQ_INT(fy_rma_ho_serve(w, 1, &box), want, "%s: refused", what);
    TAP_EQ_MEM(arena, before, sizeof(arena), "%s: nothing written", what);
}

int main(void)
{
    TAP_EQ_INT(fy_env_load(), 0, "fy_env_load");
    TAP_EQ_INT(fy_dtype_init(), 0, "fy_dtype_init");
    struct fy_rma_win w = {.flavor = MPI_WIN_FLAVOR_CREATE,
                           .rank = 0,
                           .size = 1,
                           .base = win,
                           .wsize = WIN};
    const int32_t tint = (int32_t)MPI_INT, tlong = (int32_t)MPI_LONG;
    const int32_t sum = (int32_t)MPI_SUM;
    unsigned char data[64];
    for (int i = 0; i < 64; i++)
        data[i] = (unsigned char)(200 + i);

    /* Put and get. */
    reset();
    fill(FY_RMA_AM_PUT, 0, 0, A(8), 16, data, 16);
    TAP_EQ_INT(fy_rma_ho_serve(&w, 1, &box), 0, "put: accepted");
    TAP_EQ_MEM(win + 8, data, 16, "put: data");
    TAP_EQ_MEM(arena, before, GUARD + 8, "put: before untouched");
    TAP_EQ_MEM(win + 24, before + GUARD + 24, sizeof(arena) - GUARD - 24,
               "put: after untouched");
    reset();
    fill(FY_RMA_AM_GET, 0, 0, A(WIN - 8), 8, NULL, 0);
    TAP_EQ_INT(fy_rma_ho_serve(&w, 1, &box), 0, "get of the last 8 bytes");
    TAP_EQ_MEM(box.data, win + WIN - 8, 8, "get: data");
    TAP_EQ_MEM(arena, before, sizeof(arena), "get: nothing written");

    /* Accumulates on ints. */
    reset();
    int v[2] = {5, -3}, t[2] = {100, 200}, r[2];
    memcpy(win + 16, t, sizeof(t));
    fill(FY_RMA_AM_ACC, sum, tint, A(16), 8, v, 8);
    TAP_EQ_INT(fy_rma_ho_serve(&w, 1, &box), 0, "acc SUM: accepted");
    memcpy(r, win + 16, sizeof(r));
    TAP_EQ_INT(r[0], 105, "acc SUM: first");
    TAP_EQ_INT(r[1], 197, "acc SUM: second");
    fill(FY_RMA_AM_GACC, sum, tint, A(16), 8, v, 8);
    TAP_EQ_INT(fy_rma_ho_serve(&w, 1, &box), 0, "gacc SUM: accepted");
    memcpy(r, box.data, sizeof(r));
    TAP_EQ_INT(r[0], 105, "gacc: old first");
    TAP_EQ_INT(r[1], 197, "gacc: old second");
    memcpy(r, win + 16, sizeof(r));
    TAP_EQ_INT(r[0], 110, "gacc: new first");
    fill(FY_RMA_AM_GACC, (int32_t)MPI_REPLACE, tint, A(16), 8, v, 8);
    TAP_EQ_INT(fy_rma_ho_serve(&w, 1, &box), 0, "gacc REPLACE: accepted");
    memcpy(r, box.data, sizeof(r));
    TAP_EQ_INT(r[0], 110, "gacc REPLACE: old");
    memcpy(r, win + 16, sizeof(r));
    TAP_EQ_INT(r[0], 5, "gacc REPLACE: new");
    fill(FY_RMA_AM_GACC, (int32_t)MPI_NO_OP, tint, A(16), 8, NULL, 0);
    TAP_EQ_INT(fy_rma_ho_serve(&w, 1, &box), 0, "gacc NO_OP: accepted");
    memcpy(r, box.data, sizeof(r));
    TAP_EQ_INT(r[1], -3, "gacc NO_OP: fetched");

    /* Compare-and-swap on a long. */
    long cur = 42, nw = 7, cmp = 42, got;
    memcpy(win + 32, &cur, sizeof(cur));
    unsigned char cas[16];
    memcpy(cas, &nw, 8);
    memcpy(cas + 8, &cmp, 8);
    fill(FY_RMA_AM_CAS, 0, tlong, A(32), 8, cas, 16);
    TAP_EQ_INT(fy_rma_ho_serve(&w, 1, &box), 0, "cas equal: accepted");
    memcpy(&got, box.data, 8);
    TAP_EQ_INT((int)got, 42, "cas equal: old");
    memcpy(&got, win + 32, 8);
    TAP_EQ_INT((int)got, 7, "cas equal: swapped");
    fill(FY_RMA_AM_CAS, 0, tlong, A(32), 8, cas, 16);
    TAP_EQ_INT(fy_rma_ho_serve(&w, 1, &box), 0, "cas not equal: accepted");
    memcpy(&got, win + 32, 8);
    TAP_EQ_INT((int)got, 7, "cas not equal: unchanged");

    /* Out of range. */
    fill(FY_RMA_AM_PUT, 0, 0, A(WIN - 4), 8, data, 8);
    refused(&w, -ERANGE, "put across the end");
    fill(FY_RMA_AM_PUT, 0, 0, A(0) - 8, 8, data, 8);
    refused(&w, -ERANGE, "put just before the start");
    fill(FY_RMA_AM_PUT, 0, 0, UINT64_MAX - 3, 8, data, 8);
    refused(&w, -ERANGE, "put wrapping around the address space");
    fill(FY_RMA_AM_ACC, sum, tint, A(WIN), 4, data, 4);
    refused(&w, -ERANGE, "acc just past the end");

    /* Malformed. */
    fill(0, 0, 0, A(8), 8, data, 8);
    refused(&w, -EPROTO, "kind 0");
    fill(FY_RMA_AM_FLUSH, 0, 0, A(8), 8, data, 8);
    refused(&w, -EPROTO, "kind FLUSH (not a box kind)");
    fill(99, 0, 0, A(8), 8, data, 8);
    refused(&w, -EPROTO, "kind 99");
    fill(FY_RMA_AM_PUT, 0, 0, A(8), 0, data, 0);
    refused(&w, -EPROTO, "zero bytes");
    fill(FY_RMA_AM_GET, 0, 0, A(0), FY_RMA_HO_CAP + 1, NULL, 0);
    refused(&w, -EPROTO, "more bytes than a box holds");
    fill(FY_RMA_AM_GET, 0, 0, A(0), UINT64_MAX, NULL, 0);
    refused(&w, -EPROTO, "a huge byte count");
    fill(FY_RMA_AM_ACC, sum, tint, A(8), 6, data, 6);
    refused(&w, -EINVAL, "bytes not a multiple of the type");
    fill(FY_RMA_AM_ACC, sum, 12345, A(8), 8, data, 8);
    refused(&w, -EINVAL, "no such type");
    fill(FY_RMA_AM_ACC, sum, (int32_t)MPI_2INT, A(8), 8, data, 8);
    refused(&w, -EINVAL, "pair type (not carried by boxes)");
    fill(FY_RMA_AM_ACC, 777, tint, A(8), 8, data, 8);
    refused(&w, -EINVAL, "no such op");
    fill(FY_RMA_AM_ACC, (int32_t)MPI_BXOR, (int32_t)MPI_DOUBLE, A(8), 8, data,
         8);
    refused(&w, -EINVAL, "BXOR on double");
    fill(FY_RMA_AM_CAS, 0, tlong, A(8), 16, cas, 16);
    refused(&w, -EPROTO, "cas bytes not the type's size");

    /* Split copies (no data in the box: struct fy_rma_split says where):
     * every refusal comes before a byte is copied. */
    struct fy_rma_win w2 = w;
    w2.size = 2;
    struct fy_rma_split sp = {.oaddr = 4096, .chunk = 64 << 10};
    fill(FY_RMA_HO_SPLIT_PUT, 0, 0, A(0), WIN + 1, &sp, sizeof(sp));
    refused(&w2, -ERANGE, "split put past the window's end");
    fill(FY_RMA_HO_SPLIT_GET, 0, 0, A(8), UINT64_MAX - 4, &sp, sizeof(sp));
    refused(&w2, -ERANGE, "split get wrapping the address space");
    fill(FY_RMA_HO_SPLIT_PUT, 0, 0, A(0), 0, &sp, sizeof(sp));
    refused(&w2, -EPROTO, "split put of no bytes");
    sp.chunk = 0;
    fill(FY_RMA_HO_SPLIT_PUT, 0, 0, A(0), 8, &sp, sizeof(sp));
    refused(&w2, -EPROTO, "split put with chunks of 0 bytes");
    sp.chunk = (2 << 20);
    fill(FY_RMA_HO_SPLIT_GET, 0, 0, A(0), 8, &sp, sizeof(sp));
    refused(&w2, -EPROTO, "split get with chunks over 1 MiB");
    sp.chunk = 64 << 10;
    fill(FY_RMA_HO_SPLIT_PUT, 0, 0, A(0), 8, &sp, sizeof(sp));
    reset();
    TAP_EQ_INT(fy_rma_ho_serve(&w2, 0, &box), -EPROTO,
               "split put from ourselves: refused");
    TAP_EQ_INT(fy_rma_ho_serve(&w2, 2, &box), -EPROTO,
               "split put from a rank outside the window: refused");
    TAP_EQ_INT(fy_rma_ho_serve(&w, 1, &box), -EPROTO,
               "split put on a window of one rank: refused");
    TAP_EQ_MEM(arena, before, sizeof(arena), "split: nothing written");

    /* A dynamic window: one attached region. */
    struct fy_rma_slot *slot = calloc(1, sizeof(*slot));
    TAP_OK(slot != NULL, "calloc");
    struct fy_rma_region reg = {A(64), 64};
    struct fy_rma_win d = {.flavor = MPI_WIN_FLAVOR_DYNAMIC,
                           .rank = 0,
                           .size = 1,
                           .slot = slot,
                           .regions = &reg,
                           .nregions = 1};
    reset();
    fill(FY_RMA_AM_PUT, 0, 0, A(120), 8, data, 8);
    TAP_EQ_INT(fy_rma_ho_serve(&d, 1, &box), 0, "dynamic: put at the end");
    TAP_EQ_MEM(win + 120, data, 8, "dynamic: data");
    fill(FY_RMA_AM_PUT, 0, 0, A(124), 8, data, 8);
    refused(&d, -ERANGE, "dynamic: across the region's end");
    fill(FY_RMA_AM_PUT, 0, 0, A(0), 8, data, 8);
    refused(&d, -ERANGE, "dynamic: outside every region");
    struct fy_rma_win d2 = d;
    d2.size = 2;
    fill(FY_RMA_HO_SPLIT_PUT, 0, 0, A(64), 65, &sp, sizeof(sp));
    refused(&d2, -ERANGE, "dynamic: split put across the region's end");
    free(slot);
    return tap_done();
}
