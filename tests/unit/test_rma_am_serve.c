/* SPDX-License-Identifier: MIT */
/* The target side of one-sided active messages (src/rma/am.c,
 * fy_rma_am_serve) on forged requests: a window of user memory with guard
 * bytes on both sides, and a dynamic window with three attached regions.
 * Valid puts, gets, accumulates (SUM on ints, MINLOC on MPI_DOUBLE_INT
 * pairs), get-accumulates and compare-and-swap do what they say; a piece
 * outside the window (across its end, wrapping around the address space,
 * outside every attached region, or only the second of two pieces) is
 * -ERANGE, a wrong length, piece count, kind or byte total -EPROTO, an op
 * or type the target does not accept -EINVAL - and a refused request
 * writes nothing, anywhere. Also the checks of the requests between nodes
 * (fy_rma_am_direct_check, fy_rma_am_batch_item). Runs in one process
 * without MPI_Init. */
#include <errno.h>
#include <stdalign.h>
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
static char scratch[FY_RMA_AM_CHUNK];
static uint32_t reply_tag = FY_RMA_AM_TAG_REPLY;
static unsigned char pkt[sizeof(struct fy_rma_am_hdr) +
                         (FY_RMA_AM_NSEG + 1) * sizeof(struct fy_rma_am_seg) +
                         2 * FY_RMA_AM_CHUNK];

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

/* Build a request: header, pieces, data; returns its length. */
static uint64_t build(uint32_t kind, int32_t op, int32_t type, uint64_t bytes,
                      uint32_t nseg, const struct fy_rma_am_seg *sg,
                      const void *data, uint64_t dlen)
{
    struct fy_rma_am_hdr h = {kind, nseg, bytes, op, type, reply_tag, 0};
    memcpy(pkt, &h, sizeof(h));
    size_t off = sizeof(h);
    memcpy(pkt + off, sg, nseg * sizeof(*sg));
    off += nseg * sizeof(*sg);
    if (dlen)
        memcpy(pkt + off, data, dlen);
    return off + dlen;
}

static int serve(struct fy_rma_win *w, uint64_t n, uint32_t *kind,
                 uint64_t *rbytes)
{
    return fy_rma_am_serve(w, pkt, n, scratch, kind, rbytes);
}

/* A refused request: the error, and not one byte changed. */
static void refused(struct fy_rma_win *w, uint64_t n, int want,
                    const char *what)
{
    uint32_t kind;
    uint64_t rb = 99;
    reset();
    TAP_EQ_INT(serve(w, n, &kind, &rb), want, "%s: refused", what);
    TAP_EQ_INT((int)rb, 0, "%s: no reply data", what);
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
    uint32_t kind;
    uint64_t rb, n;
    const int32_t tint = (int32_t)MPI_INT;
    unsigned char data[128];
    for (int i = 0; i < 128; i++)
        data[i] = (unsigned char)(200 + i);

    /* A valid put of 16 bytes in two pieces. */
    reset();
    struct fy_rma_am_seg sg[FY_RMA_AM_NSEG + 1] = {{A(8), 8}, {A(100), 8}};
    n = build(FY_RMA_AM_PUT, 0, 0, 16, 2, sg, data, 16);
    TAP_EQ_INT(serve(&w, n, &kind, &rb), 0, "put: accepted");
    TAP_EQ_INT((int)kind, FY_RMA_AM_PUT, "put: kind");
    TAP_EQ_MEM(win + 8, data, 8, "put: first piece");
    TAP_EQ_MEM(win + 100, data + 8, 8, "put: second piece");
    TAP_EQ_MEM(arena, before, GUARD + 8, "put: before the first piece");

    /* Out of range, in every way. */
    sg[0] = (struct fy_rma_am_seg){A(WIN - 4), 8};
    refused(&w, build(FY_RMA_AM_PUT, 0, 0, 8, 1, sg, data, 8), -ERANGE,
            "put across the end");
    sg[0] = (struct fy_rma_am_seg){A(0) - 8, 8};
    refused(&w, build(FY_RMA_AM_PUT, 0, 0, 8, 1, sg, data, 8), -ERANGE,
            "put just before the start");
    sg[0] = (struct fy_rma_am_seg){UINT64_MAX - 3, 8};
    refused(&w, build(FY_RMA_AM_PUT, 0, 0, 8, 1, sg, data, 8), -ERANGE,
            "put wrapping around the address space");
    sg[0] = (struct fy_rma_am_seg){A(8), 8};
    sg[1] = (struct fy_rma_am_seg){A(WIN), 8};
    refused(&w, build(FY_RMA_AM_PUT, 0, 0, 16, 2, sg, data, 16), -ERANGE,
            "second piece outside (first not applied either)");
    sg[0] = (struct fy_rma_am_seg){A(8), 0};
    refused(&w, build(FY_RMA_AM_PUT, 0, 0, 0, 1, sg, data, 0), -ERANGE,
            "empty piece");
    sg[0] = (struct fy_rma_am_seg){A(0), WIN + 1};
    refused(&w, build(FY_RMA_AM_PUT, 0, 0, WIN + 1, 1, sg, data, 0), -EPROTO,
            "data shorter than its byte count");

    /* Malformed. */
    sg[0] = (struct fy_rma_am_seg){A(8), 8};
    n = build(FY_RMA_AM_PUT, 0, 0, 8, 1, sg, data, 8);
    refused(&w, n - 1, -EPROTO, "put one byte short");
    refused(&w, n + 1, -EPROTO, "put one byte long");
    refused(&w, build(FY_RMA_AM_PUT, 0, 0, 12, 1, sg, data, 12), -EPROTO,
            "pieces cover less than the bytes");
    for (int i = 0; i <= FY_RMA_AM_NSEG; i++)
        sg[i] = (struct fy_rma_am_seg){A((size_t)i), 1};
    refused(&w,
            build(FY_RMA_AM_PUT, 0, 0, FY_RMA_AM_NSEG + 1, FY_RMA_AM_NSEG + 1,
                  sg, data, FY_RMA_AM_NSEG + 1),
            -EPROTO, "more pieces than allowed");
    sg[0] = (struct fy_rma_am_seg){A(8), 8};
    refused(&w, build(0, 0, 0, 8, 1, sg, data, 8), -EPROTO, "kind 0");
    refused(&w, build(99, 0, 0, 8, 1, sg, data, 8), -EPROTO, "kind 99");
    refused(&w, build(FY_RMA_AM_FLUSH, 0, 0, 0, 0, sg, data, 4), -EPROTO,
            "flush with a payload");
    reset();
    TAP_EQ_INT(serve(&w, 10, &kind, &rb), -EPROTO, "shorter than a header");
    TAP_EQ_INT((int)kind, 0, "short: no kind");
    TAP_EQ_INT(
        serve(&w, build(FY_RMA_AM_FLUSH, 0, 0, 0, 0, sg, data, 0), &kind, &rb),
        0, "flush accepted");
    TAP_EQ_INT((int)rb, 0, "flush: no reply data");

    /* Accumulates: type and op checked by the target. */
    int add[4] = {1, 2, 3, 4}, cur[4];
    sg[0] = (struct fy_rma_am_seg){A(16), 16};
    refused(
        &w,
        build(FY_RMA_AM_ACC, (int32_t)MPI_SUM, 0x7fff1234, 16, 1, sg, add, 16),
        -EINVAL, "accumulate with an unknown type");
    refused(&w, build(FY_RMA_AM_ACC, 0x7fff1234, tint, 16, 1, sg, add, 16),
            -EINVAL, "accumulate with an unknown op");
    refused(&w,
            build(FY_RMA_AM_ACC, (int32_t)MPI_BXOR, (int32_t)MPI_DOUBLE, 16, 1,
                  sg, add, 16),
            -EINVAL, "BXOR on doubles");
    sg[0] = (struct fy_rma_am_seg){A(16), 6};
    refused(&w, build(FY_RMA_AM_ACC, (int32_t)MPI_SUM, tint, 6, 1, sg, add, 6),
            -EINVAL, "bytes not a multiple of the type");
    sg[0] = (struct fy_rma_am_seg){A(WIN - 8), 16};
    refused(&w,
            build(FY_RMA_AM_ACC, (int32_t)MPI_SUM, tint, 16, 1, sg, add, 16),
            -ERANGE, "accumulate across the end");
    reset();
    memcpy(cur, win + 16, 16);
    sg[0] = (struct fy_rma_am_seg){A(16), 16};
    TAP_EQ_INT(
        serve(&w,
              build(FY_RMA_AM_ACC, (int32_t)MPI_SUM, tint, 16, 1, sg, add, 16),
              &kind, &rb),
        0, "accumulate SUM accepted");
    for (int i = 0; i < 4; i++) {
        int got;
        memcpy(&got, win + 16 + 4 * i, 4);
        TAP_EQ_INT(got, (int)((unsigned)cur[i] + (unsigned)add[i]),
                   "accumulate SUM element %d", i);
    }
    /* Get-accumulate: the old contents come back. */
    reset();
    memcpy(cur, win + 16, 16);
    TAP_EQ_INT(
        serve(&w,
              build(FY_RMA_AM_GACC, (int32_t)MPI_SUM, tint, 16, 1, sg, add, 16),
              &kind, &rb),
        0, "get_accumulate accepted");
    TAP_EQ_INT((int)rb, 16, "get_accumulate: reply bytes");
    TAP_EQ_MEM(scratch, cur, 16, "get_accumulate: old contents replied");
    /* MINLOC on value-index pairs (a non-contiguous predefined type). */
    struct {
        double v;
        int i;
    } pw[2] = {{5.0, 1}, {7.0, 2}};
    reset();
    memcpy(win + 32, pw, sizeof(pw));
    unsigned char pad[4];
    memcpy(pad, win + 44, 4);
    unsigned char packed[24];
    double v0 = 3.0, v1 = 9.0;
    int i0 = 8, i1 = 9;
    memcpy(packed, &v0, 8);
    memcpy(packed + 8, &i0, 4);
    memcpy(packed + 12, &v1, 8);
    memcpy(packed + 20, &i1, 4);
    sg[0] = (struct fy_rma_am_seg){A(32), 12};
    sg[1] = (struct fy_rma_am_seg){A(48), 12};
    TAP_EQ_INT(serve(&w,
                     build(FY_RMA_AM_ACC, (int32_t)MPI_MINLOC,
                           (int32_t)MPI_DOUBLE_INT, 24, 2, sg, packed, 24),
                     &kind, &rb),
               0, "MINLOC on MPI_DOUBLE_INT accepted");
    memcpy(pw, win + 32, sizeof(pw));
    TAP_OK(pw[0].v == 3.0 && pw[0].i == 8, "MINLOC: smaller value wins");
    TAP_OK(pw[1].v == 7.0 && pw[1].i == 2, "MINLOC: larger value stays");
    TAP_EQ_MEM(win + 44, pad, 4, "MINLOC: padding untouched");

    /* Compare-and-swap. */
    reset();
    int now;
    memcpy(&now, win + 64, 4);
    int cas[2] = {4242, now};
    sg[0] = (struct fy_rma_am_seg){A(64), 4};
    TAP_EQ_INT(
        serve(&w, build(FY_RMA_AM_CAS, 0, tint, 4, 1, sg, cas, 8), &kind, &rb),
        0, "compare_and_swap accepted");
    int got;
    memcpy(&got, win + 64, 4);
    TAP_EQ_INT(got, 4242, "compare_and_swap: swapped when equal");
    TAP_EQ_MEM(scratch, &now, 4, "compare_and_swap: old value replied");
    sg[1] = (struct fy_rma_am_seg){A(68), 4};
    refused(&w, build(FY_RMA_AM_CAS, 0, tint, 8, 2, sg, data, 16), -EPROTO,
            "compare_and_swap of two pieces");
    sg[0] = (struct fy_rma_am_seg){A(WIN - 2), 4};
    refused(&w, build(FY_RMA_AM_CAS, 0, tint, 4, 1, sg, cas, 8), -ERANGE,
            "compare_and_swap across the end");

    /* Get. */
    reset();
    sg[0] = (struct fy_rma_am_seg){A(200), 32};
    TAP_EQ_INT(
        serve(&w, build(FY_RMA_AM_GET, 0, 0, 32, 1, sg, NULL, 0), &kind, &rb),
        0, "get accepted");
    TAP_EQ_INT((int)rb, 32, "get: reply bytes");
    TAP_EQ_MEM(scratch, win + 200, 32, "get: data");
    sg[0] = (struct fy_rma_am_seg){A(240), 32};
    refused(&w, build(FY_RMA_AM_GET, 0, 0, 32, 1, sg, NULL, 0), -ERANGE,
            "get across the end");
    sg[0] = (struct fy_rma_am_seg){A(200), 32};
    reply_tag = 0;
    refused(&w, build(FY_RMA_AM_GET, 0, 0, 32, 1, sg, NULL, 0), -EPROTO,
            "get naming reply tag 0");
    reply_tag = FY_RMA_AM_TAG_MAX + 1u;
    refused(&w, build(FY_RMA_AM_FLUSH, 0, 0, 0, 0, sg, NULL, 0), -EPROTO,
            "flush naming a reply tag beyond the range");
    reply_tag = FY_RMA_AM_TAG_REPLY;

    /* Requests between nodes that fy_rma_am_serve does not take: the
     * synchronisation kinds, and direct puts and gets, which
     * fy_rma_am_direct_check checks (one piece; a put's tag in the data
     * range, a get's data and status tags in the reply range). */
    for (uint32_t k = FY_RMA_AM_LOCK; k <= FY_RMA_AM_BATCH; k++)
        refused(&w, build(k, 0, 0, 0, 0, sg, NULL, 0), -EPROTO,
                "a kind between nodes, not served here");
    struct fy_rma_am_seg dsg;
    sg[0] = (struct fy_rma_am_seg){A(16), 128};
    reply_tag = FY_RMA_AM_TAG_DATA + 5;
    n = build(FY_RMA_AM_PUT_DIRECT, 0, 0, 128, 1, sg, NULL, 0);
    TAP_EQ_INT(fy_rma_am_direct_check(&w, pkt, n, &dsg), 0, "direct put");
    TAP_EQ_INT((int)(dsg.addr == A(16) && dsg.len == 128), 1,
               "direct put: its piece");
    TAP_EQ_INT(fy_rma_am_direct_check(&w, pkt, n + 1, &dsg), -EPROTO,
               "direct put one byte long");
    TAP_EQ_INT(fy_rma_am_direct_check(&w, pkt, n - 16, &dsg), -EPROTO,
               "direct put without its piece");
    n = build(FY_RMA_AM_PUT_DIRECT, 0, 0, 127, 1, sg, NULL, 0);
    TAP_EQ_INT(fy_rma_am_direct_check(&w, pkt, n, &dsg), -EPROTO,
               "direct put: byte count not its piece's");
    sg[1] = sg[0];
    n = build(FY_RMA_AM_PUT_DIRECT, 0, 0, 128, 2, sg, NULL, 0);
    TAP_EQ_INT(fy_rma_am_direct_check(&w, pkt, n, &dsg), -EPROTO,
               "direct put of two pieces");
    sg[0] = (struct fy_rma_am_seg){A(WIN - 64), 128};
    n = build(FY_RMA_AM_PUT_DIRECT, 0, 0, 128, 1, sg, NULL, 0);
    TAP_EQ_INT(fy_rma_am_direct_check(&w, pkt, n, &dsg), -ERANGE,
               "direct put across the end");
    sg[0] = (struct fy_rma_am_seg){UINT64_MAX - 63, 128};
    n = build(FY_RMA_AM_PUT_DIRECT, 0, 0, 128, 1, sg, NULL, 0);
    TAP_EQ_INT(fy_rma_am_direct_check(&w, pkt, n, &dsg), -ERANGE,
               "direct put wrapping around the address space");
    sg[0] = (struct fy_rma_am_seg){A(16), 128};
    reply_tag = FY_RMA_AM_TAG_REPLY + 5;
    n = build(FY_RMA_AM_PUT_DIRECT, 0, 0, 128, 1, sg, NULL, 0);
    TAP_EQ_INT(fy_rma_am_direct_check(&w, pkt, n, &dsg), -EPROTO,
               "direct put with a reply's tag");
    n = build(FY_RMA_AM_GET_DIRECT, FY_RMA_AM_TAG_REPLY + 6, 0, 128, 1, sg,
              NULL, 0);
    TAP_EQ_INT(fy_rma_am_direct_check(&w, pkt, n, &dsg), 0, "direct get");
    n = build(FY_RMA_AM_GET_DIRECT, 0, 0, 128, 1, sg, NULL, 0);
    TAP_EQ_INT(fy_rma_am_direct_check(&w, pkt, n, &dsg), -EPROTO,
               "direct get with status tag 0");
    reply_tag = FY_RMA_AM_TAG_DATA + 5;
    n = build(FY_RMA_AM_GET_DIRECT, FY_RMA_AM_TAG_REPLY + 6, 0, 128, 1, sg,
              NULL, 0);
    TAP_EQ_INT(fy_rma_am_direct_check(&w, pkt, n, &dsg), -EPROTO,
               "direct get with a data tag");
    n = build(FY_RMA_AM_GET, 0, 0, 128, 1, sg, NULL, 0);
    TAP_EQ_INT(fy_rma_am_direct_check(&w, pkt, n, &dsg), -EPROTO,
               "not a direct kind");
    reply_tag = FY_RMA_AM_TAG_REPLY;

    /* Batches: items walked one by one, each bounded by the packet. */
    {
        alignas(8) unsigned char b[256];
        struct fy_rma_am_hdr bh = {.kind = FY_RMA_AM_BATCH, .nseg = 2};
        struct fy_rma_am_hdr ih = {.kind = FY_RMA_AM_PUT, .nseg = 1};
        uint32_t l1 = 32 + 16 + 4, l2 = 32;
        memset(b, 0, sizeof(b));
        memcpy(b, &bh, sizeof(bh));
        uint64_t at = sizeof(bh);
        memcpy(b + at, &l1, 4);
        memcpy(b + at + 8, &ih, sizeof(ih));
        at += 8 + 56; /* 52 padded to 56 */
        memcpy(b + at, &l2, 4);
        memcpy(b + at + 8, &ih, sizeof(ih));
        at += 8 + 32;
        uint64_t off = sizeof(bh), len = 0;
        const void *item = NULL;
        TAP_EQ_INT(fy_rma_am_batch_item(b, at, &off, &item, &len), 1,
                   "batch: first item");
        TAP_EQ_INT((int)(item == b + 40 && len == l1), 1,
                   "batch: first item's place and length");
        TAP_EQ_INT(fy_rma_am_batch_item(b, at, &off, &item, &len), 1,
                   "batch: second item");
        TAP_EQ_INT((int)(item == b + 104 && len == l2), 1,
                   "batch: second item after the padding");
        TAP_EQ_INT(fy_rma_am_batch_item(b, at, &off, &item, &len), 0,
                   "batch: the end");
        off = sizeof(bh);
        TAP_EQ_INT(fy_rma_am_batch_item(b, at - 1, &off, &item, &len), 1,
                   "batch one byte short: first item still whole");
        TAP_EQ_INT(fy_rma_am_batch_item(b, at - 1, &off, &item, &len), -EPROTO,
                   "batch one byte short: second item refused");
        off = sizeof(bh);
        TAP_EQ_INT(fy_rma_am_batch_item(b, sizeof(bh) + 4, &off, &item, &len),
                   -EPROTO, "batch: a length word cut short");
        uint32_t big = 0xfffffff0u;
        memcpy(b + sizeof(bh), &big, 4);
        off = sizeof(bh);
        TAP_EQ_INT(fy_rma_am_batch_item(b, at, &off, &item, &len), -EPROTO,
                   "batch: an item longer than the packet");
        uint32_t tiny = 8;
        memcpy(b + sizeof(bh), &tiny, 4);
        off = sizeof(bh);
        TAP_EQ_INT(fy_rma_am_batch_item(b, at, &off, &item, &len), -EPROTO,
                   "batch: an item shorter than a request header");
        memcpy(b + sizeof(bh), &l1, 4);
        memcpy(b + sizeof(bh) + 8, &bh, sizeof(bh));
        off = sizeof(bh);
        TAP_EQ_INT(fy_rma_am_batch_item(b, at, &off, &item, &len), -EPROTO,
                   "batch: a batch inside a batch");
        off = at + 8;
        TAP_EQ_INT(fy_rma_am_batch_item(b, at, &off, &item, &len), -EPROTO,
                   "batch: an offset past the end");
    }

    /* A dynamic window: three attached regions, the first two adjoining
     * (one access may span them), a gap before the third. */
    struct fy_rma_slot *slot = calloc(1, sizeof(*slot));
    struct fy_rma_region regs[3] = {{A(0), 64}, {A(64), 32}, {A(100), 28}};
    struct fy_rma_win d = {.flavor = MPI_WIN_FLAVOR_DYNAMIC,
                           .rank = 0,
                           .size = 1,
                           .slot = slot,
                           .regions = regs,
                           .nregions = 3};
    reset();
    sg[0] = (struct fy_rma_am_seg){A(70), 8};
    TAP_EQ_INT(
        serve(&d, build(FY_RMA_AM_PUT, 0, 0, 8, 1, sg, data, 8), &kind, &rb), 0,
        "dynamic: put inside a region");
    TAP_EQ_MEM(win + 70, data, 8, "dynamic: put data");
    sg[0] = (struct fy_rma_am_seg){A(60), 8};
    TAP_EQ_INT(
        serve(&d, build(FY_RMA_AM_PUT, 0, 0, 8, 1, sg, data, 8), &kind, &rb), 0,
        "dynamic: piece over two adjoining regions");
    TAP_EQ_MEM(win + 60, data, 8, "dynamic: data over two regions");
    reset();
    sg[0] = (struct fy_rma_am_seg){A(92), 8};
    refused(&d, build(FY_RMA_AM_PUT, 0, 0, 8, 1, sg, data, 8), -ERANGE,
            "dynamic: piece across a gap");
    sg[0] = (struct fy_rma_am_seg){A(130), 8};
    refused(&d, build(FY_RMA_AM_PUT, 0, 0, 8, 1, sg, data, 8), -ERANGE,
            "dynamic: outside every region");
    free(slot);
    return tap_done();
}
