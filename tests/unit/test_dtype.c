/* SPDX-License-Identifier: MIT */
/* Unit test of the datatype engine and reductions (src/dtype): type maps,
 * bounds and extents (checked against values MPICH 4.0 reports for the same
 * constructors), pack/unpack round trips, partial unpacks that must not
 * write outside the receive buffer, element counts, every predefined op,
 * op/type validity, user ops, reference counting and the MPI_Status count
 * encoding. Runs in one process without MPI_Init. */
#include <complex.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "dtype/dtype.h"
#include "harness.h"
#include "mpi/status.h"
#include "util/util.h"

static struct fy_dtype *T(MPI_Datatype h)
{
    struct fy_dtype *dt = fy_dtype_get(h);
    if (!dt) {
        printf("# no predefined datatype 0x%x\n", (unsigned)h);
        exit(1);
    }
    return dt;
}

/* Check size, lb, extent, true lb and true extent in one line. */
static void check_bounds(const struct fy_dtype *dt, MPI_Count size, MPI_Aint lb,
                         MPI_Aint extent, MPI_Aint tlb, MPI_Aint textent,
                         const char *what)
{
    bool ok = dt->size == size && dt->lb == lb && dt->extent == extent &&
              dt->ub == lb + extent && dt->true_lb == tlb &&
              dt->true_ub - dt->true_lb == textent;
    TAP_OK(ok, "bounds of %s", what);
    if (!ok)
        tap_diag("got size %ld lb %ld extent %ld true_lb %ld true_extent %ld"
                 "; want %ld %ld %ld %ld %ld",
                 (long)dt->size, (long)dt->lb, (long)dt->extent,
                 (long)dt->true_lb, (long)(dt->true_ub - dt->true_lb),
                 (long)size, (long)lb, (long)extent, (long)tlb, (long)textent);
}

static struct fy_dtype *vec(MPI_Count n, MPI_Count bl, MPI_Aint stride,
                            struct fy_dtype *old)
{
    struct fy_dtype *dt = NULL;
    int rc = fy_dtype_vector(n, bl, stride, old, MPI_COMBINER_HVECTOR, &dt);
    if (rc) {
        printf("# vector failed: %d\n", rc);
        exit(1);
    }
    return dt;
}

static struct fy_dtype *strct(int n, const MPI_Count *bl, const MPI_Aint *d,
                              struct fy_dtype *const *ts)
{
    struct fy_dtype *dt = NULL;
    int rc = fy_dtype_struct(n, bl, d, ts, &dt);
    if (rc) {
        printf("# struct failed: %d\n", rc);
        exit(1);
    }
    return dt;
}

static struct fy_dtype *resized(struct fy_dtype *old, MPI_Aint lb, MPI_Aint ext)
{
    struct fy_dtype *dt = NULL;
    if (fy_dtype_resized(old, lb, ext, &dt)) {
        printf("# resized failed\n");
        exit(1);
    }
    return dt;
}

/* ---- bounds and extents ------------------------------------------------ */

static void test_bounds(void)
{
    struct fy_dtype *Ti = T(MPI_INT), *D = T(MPI_DOUBLE), *C = T(MPI_CHAR);

    check_bounds(Ti, 4, 0, 4, 0, 4, "MPI_INT");
    check_bounds(T(MPI_DOUBLE_INT), 12, 0, 16, 0, 12, "MPI_DOUBLE_INT");
    check_bounds(T(MPI_SHORT_INT), 6, 0, 8, 0, 8, "MPI_SHORT_INT");
    check_bounds(T(MPI_FLOAT_INT), 8, 0, 8, 0, 8, "MPI_FLOAT_INT");
    check_bounds(T(MPI_LONG_DOUBLE_INT), 20, 0, 32, 0, 20,
                 "MPI_LONG_DOUBLE_INT");
    check_bounds(T(MPI_2INT), 8, 0, 8, 0, 8, "MPI_2INT");
    check_bounds(T(MPI_LB), 0, 0, 0, 0, 0, "MPI_LB");
    TAP_OK(T(MPI_2INT)->contig && !T(MPI_DOUBLE_INT)->contig,
           "2INT is contiguous, DOUBLE_INT is not");
    TAP_EQ_INT(T(MPI_DOUBLE_INT)->nbasic, 2, "a pair has two elements");
    TAP_OK(fy_dtype_get(MPI_DATATYPE_NULL) == NULL, "NULL handle rejected");
    TAP_OK(fy_dtype_get((MPI_Datatype)0x4c0004ff) == NULL,
           "garbage builtin handle rejected");
    TAP_OK(fy_dtype_get(MPI_COMM_WORLD) == NULL, "comm handle rejected");
    TAP_EQ_STR(T(MPI_LONG_LONG)->name, "MPI_LONG_LONG_INT", "builtin name");

    struct fy_dtype *dt;
    dt = vec(3, 2, 16, Ti);
    check_bounds(dt, 24, 0, 40, 0, 40, "vector(3,2,4,int)");
    TAP_OK(!dt->contig, "strided vector is not contiguous");
    fy_dtype_release(dt);
    dt = vec(3, 2, -16, Ti);
    check_bounds(dt, 24, -32, 40, -32, 40, "vector(3,2,-4,int)");
    fy_dtype_release(dt);
    dt = vec(4, 3, 12, Ti);
    check_bounds(dt, 48, 0, 48, 0, 48, "vector(4,3,3,int) is contiguous");
    TAP_OK(dt->contig && dt->nsegs == 1, "touching blocks merge into one run");
    fy_dtype_release(dt);
    dt = vec(2, 1, 32, T(MPI_DOUBLE_INT));
    check_bounds(dt, 24, 0, 48, 0, 44, "vector(2,1,2,double_int)");
    TAP_EQ_INT(dt->pair, FY_PAIR_DOUBLE_INT, "vector of pairs is a pair type");
    fy_dtype_release(dt);

    {
        MPI_Count bl[3] = {0, 2, 1};
        MPI_Aint d[3] = {-20, 12, 40};
        fy_dtype_indexed(3, bl, d, Ti, MPI_COMBINER_INDEXED, &dt);
        check_bounds(dt, 12, 12, 32, 12, 32, "indexed, empty first block");
        fy_dtype_release(dt);
    }
    {
        MPI_Count bl[2] = {1, 1};
        MPI_Aint d[2] = {0, 8};
        struct fy_dtype *ts[2] = {D, C};
        dt = strct(2, bl, d, ts);
        check_bounds(dt, 9, 0, 16, 0, 9, "struct{double,char} padded");
        fy_dtype_release(dt);
        MPI_Aint d2[2] = {-3, 0};
        struct fy_dtype *ts2[2] = {C, Ti};
        dt = strct(2, bl, d2, ts2);
        check_bounds(dt, 5, -3, 8, -3, 7, "struct{char@-3,int@0}");
        fy_dtype_release(dt);
        MPI_Aint d3[2] = {0, 20};
        struct fy_dtype *ts3[2] = {T(MPI_LONG_DOUBLE), C};
        dt = strct(2, bl, d3, ts3);
        check_bounds(dt, 17, 0, 32, 0, 21, "struct{long double,char@20}");
        fy_dtype_release(dt);
    }
    {
        /* One block: no padding (MPICH agrees). */
        struct fy_dtype *hv = vec(2, 1, 12, D);
        MPI_Count bl[2] = {1, 0};
        MPI_Aint d[2] = {0, 0};
        struct fy_dtype *ts[2] = {hv, C};
        dt = strct(1, bl, d, ts);
        check_bounds(dt, 16, 0, 20, 0, 20, "struct of one hvector block");
        fy_dtype_release(dt);
        dt = strct(2, bl, d, ts);
        check_bounds(dt, 16, 0, 24, 0, 20, "same plus an empty block: padded");
        fy_dtype_release(dt);
        fy_dtype_release(hv);
    }
    {
        struct fy_dtype *r6 = resized(Ti, 0, 6);
        check_bounds(r6, 4, 0, 6, 0, 4, "resized(int,0,6)");
        MPI_Count bl[2] = {1, 1};
        MPI_Aint d[2] = {0, 8};
        struct fy_dtype *ts[2] = {r6, r6};
        dt = strct(2, bl, d, ts);
        check_bounds(dt, 8, 0, 14, 0, 12, "struct of resized types: no pad");
        fy_dtype_release(dt);
        MPI_Aint d2[2] = {0, 2};
        struct fy_dtype *ts2[2] = {r6, C};
        dt = strct(2, bl, d2, ts2);
        check_bounds(dt, 5, 0, 8, 0, 4, "struct{resized6,char@2}: padded");
        fy_dtype_release(dt);
        fy_dtype_release(r6);
        struct fy_dtype *rn = resized(Ti, -2, 9);
        struct fy_dtype *ts3[2] = {rn, D};
        MPI_Aint d3[2] = {0, 16};
        dt = strct(2, bl, d3, ts3);
        check_bounds(dt, 12, -2, 32, 0, 24, "struct{resized(-2,9),double@16}");
        fy_dtype_release(dt);
        fy_dtype_release(rn);
    }
    {
        MPI_Count bl[3] = {1, 1, 1};
        MPI_Aint d[3] = {-8, 0, 16};
        struct fy_dtype *ts[3] = {T(MPI_LB), Ti, T(MPI_UB)};
        dt = strct(3, bl, d, ts);
        check_bounds(dt, 4, -8, 24, 0, 4, "struct with MPI_LB/MPI_UB");
        fy_dtype_release(dt);
    }
    {
        fy_dtype_contiguous(0, Ti, &dt);
        check_bounds(dt, 0, 0, 0, 0, 0, "contiguous(0)");
        fy_dtype_release(dt);
        fy_dtype_contiguous(1000000, T(MPI_FLOAT_INT), &dt);
        TAP_OK(dt->contig && dt->nsegs == 2 && dt->size == 8000000,
               "contiguous(1M, FLOAT_INT) stays two segments, contiguous");
        fy_dtype_release(dt);
        dt = vec(10000000, 1, 8, Ti);
        TAP_OK(dt->nsegs == 1 && dt->rep == 10000000 && dt->size == 40000000,
               "vector(10M) keeps one block of segments");
        fy_dtype_release(dt);
    }
    TAP_EQ_INT(fy_dtype_vector(-1, 1, 4, Ti, MPI_COMBINER_VECTOR, &dt), -EINVAL,
               "negative count rejected");
    TAP_EQ_INT(
        fy_dtype_vector(LONG_MAX / 2, 4, 4, Ti, MPI_COMBINER_VECTOR, &dt),
        -EOVERFLOW, "overflowing size rejected");
}

/* ---- pack / unpack --------------------------------------------------- */

/* Reference packing: walk every byte of every element through the
 * flattened type map slowly, to compare the engine's fast paths against. */
static size_t ref_pack(const unsigned char *buf, MPI_Count count,
                       const struct fy_dtype *dt, unsigned char *out)
{
    size_t o = 0;
    for (MPI_Count i = 0; i < count; i++)
        for (MPI_Count r = 0; r < dt->rep; r++)
            for (uint32_t s = 0; s < dt->nsegs; s++) {
                const struct fy_dtype_seg *g = &dt->segs[s];
                size_t n = (size_t)g->count * fy_basic_size(g->basic);
                const unsigned char *p =
                    buf + i * dt->extent + r * dt->rep_stride + g->disp;
                for (size_t k = 0; k < n; k++)
                    out[o++] = p[k];
            }
    return o;
}

#define ARENA 4096
#define ORIGIN 1024 /* buffers start here so negative lbs stay inside */

static void roundtrip(struct fy_dtype *dt, MPI_Count count, const char *what)
{
    unsigned char *src = malloc(ARENA), *dst = malloc(ARENA);
    unsigned char *want = malloc(ARENA), *got = malloc(ARENA);
    unsigned char *chunked = malloc(ARENA);
    for (int i = 0; i < ARENA; i++) {
        src[i] = (unsigned char)(i * 7 + 3);
        dst[i] = 0xee;
    }
    size_t n = ref_pack(src + ORIGIN, count, dt, want);
    TAP_EQ_SIZE(n, (size_t)(count * dt->size), "%s: packed size", what);
    memset(got, 0, ARENA);
    fy_dtype_pack(src + ORIGIN, count, dt, got);
    TAP_EQ_MEM(got, want, n, "%s: pack matches the type map", what);

    /* In pieces of awkward sizes, as a pipelined protocol would. */
    memset(chunked, 0, ARENA);
    for (MPI_Count off = 0; off < (MPI_Count)n;) {
        MPI_Count len = FY_MIN((MPI_Count)n - off, 1 + (off % 7));
        fy_dtype_pack_range(src + ORIGIN, count, dt, off, len, chunked + off);
        off += len;
    }
    TAP_EQ_MEM(chunked, want, n, "%s: pack_range in pieces", what);

    /* Unpack into a poisoned buffer: data lands where the map says and
     * nowhere else. */
    fy_dtype_unpack(got, (MPI_Count)n, dst + ORIGIN, count, dt);
    unsigned char *expect = malloc(ARENA);
    memset(expect, 0xee, ARENA);
    for (MPI_Count i = 0; i < count; i++)
        for (MPI_Count r = 0; r < dt->rep; r++)
            for (uint32_t s = 0; s < dt->nsegs; s++) {
                const struct fy_dtype_seg *g = &dt->segs[s];
                size_t off =
                    ORIGIN + i * dt->extent + r * dt->rep_stride + g->disp;
                memcpy(expect + off, src + off,
                       (size_t)g->count * fy_basic_size(g->basic));
            }
    TAP_EQ_MEM(dst, expect, ARENA, "%s: unpack writes exactly the map", what);

    memset(dst, 0xee, ARENA);
    for (MPI_Count off = 0; off < (MPI_Count)n;) {
        MPI_Count len = FY_MIN((MPI_Count)n - off, 3 + (off % 5));
        fy_dtype_unpack_range(got + off, off, len, dst + ORIGIN, count, dt);
        off += len;
    }
    TAP_EQ_MEM(dst, expect, ARENA, "%s: unpack_range in pieces", what);

    /* The iovec view covers the same bytes in the same order. */
    struct iovec iov[256];
    MPI_Count covered = 0;
    int niov = fy_dtype_iov(src + ORIGIN, count, dt, 0, iov, 256, &covered);
    size_t o = 0;
    bool same = true;
    for (int k = 0; k < niov; k++) {
        same = same && memcmp(iov[k].iov_base, want + o, iov[k].iov_len) == 0;
        o += iov[k].iov_len;
    }
    TAP_OK(same && o == n && (covered == (MPI_Count)n || niov == 256),
           "%s: iov lists the packed bytes (%d pieces)", what, niov);
    free(src);
    free(dst);
    free(want);
    free(got);
    free(chunked);
    free(expect);
}

static void test_pack(void)
{
    struct fy_dtype *Ti = T(MPI_INT), *D = T(MPI_DOUBLE), *C = T(MPI_CHAR);
    struct fy_dtype *dt;

    roundtrip(Ti, 10, "10 ints");
    roundtrip(T(MPI_DOUBLE_INT), 5, "5 DOUBLE_INT");
    roundtrip(T(MPI_SHORT_INT), 7, "7 SHORT_INT");
    dt = vec(3, 2, 16, Ti);
    roundtrip(dt, 4, "4 x vector(3,2,4,int)");
    fy_dtype_release(dt);
    dt = vec(3, 2, -16, Ti);
    roundtrip(dt, 2, "2 x vector with negative stride");
    fy_dtype_release(dt);
    {
        MPI_Count bl[3] = {2, 1, 3};
        MPI_Aint d[3] = {40, 0, 13};
        fy_dtype_indexed(3, bl, d, C, MPI_COMBINER_HINDEXED, &dt);
        roundtrip(dt, 3, "3 x hindexed chars out of order");
        fy_dtype_release(dt);
    }
    {
        MPI_Count bl[3] = {1, 2, 1};
        MPI_Aint d[3] = {0, 9, 24};
        struct fy_dtype *ts[3] = {D, C, Ti};
        dt = strct(3, bl, d, ts);
        roundtrip(dt, 5, "5 x struct{double,2 char@9,int@24}");
        struct fy_dtype *outer = vec(2, 2, 100, dt);
        roundtrip(outer, 2, "2 x hvector of structs");
        fy_dtype_release(outer);
        fy_dtype_release(dt);
    }
    {
        struct fy_dtype *r = resized(Ti, -4, 12);
        roundtrip(r, 6, "6 x resized(int,-4,12)");
        fy_dtype_release(r);
    }

    /* Partial unpack: 2.5 elements of a vector arrive into a buffer of 4
     * elements fenced by guard bytes. Only the first 10 bytes of data may
     * change. */
    {
        dt = vec(2, 1, 8, Ti); /* ints at 0 and 8, extent 12 */
        unsigned char buf[64 + 2 * 16], want[sizeof(buf)];
        memset(buf, 0xa5, sizeof(buf));
        memcpy(want, buf, sizeof(buf));
        unsigned char packed[32];
        for (int i = 0; i < 32; i++)
            packed[i] = (unsigned char)i;
        fy_dtype_unpack(packed, 10, buf + 16, 4, dt);
        memcpy(want + 16, packed, 4);          /* element 0, int 0 */
        memcpy(want + 16 + 8, packed + 4, 4);  /* element 0, int 1 */
        memcpy(want + 16 + 12, packed + 8, 2); /* element 1: 2 bytes */
        TAP_EQ_MEM(buf, want, sizeof(buf),
                   "partial unpack writes only the bytes that arrived");
        /* More data than the buffer holds: stops at count elements. */
        memset(buf, 0xa5, sizeof(buf));
        memcpy(want, buf, sizeof(buf));
        fy_dtype_unpack(packed, 32, buf + 16, 1, dt);
        memcpy(want + 16, packed, 4);
        memcpy(want + 24, packed + 4, 4);
        TAP_EQ_MEM(buf, want, sizeof(buf),
                   "unpack never goes past count elements");
        fy_dtype_release(dt);
    }
}

/* ---- element counts ------------------------------------------------------ */

static void test_elements(void)
{
    struct fy_dtype *Ti = T(MPI_INT);
    TAP_EQ_INT(fy_dtype_elements(Ti, 8), 2, "8 bytes of int: 2");
    TAP_EQ_INT(fy_dtype_elements(Ti, 10), -1, "10 bytes of int: undefined");
    TAP_EQ_INT(fy_dtype_elements(T(MPI_DOUBLE_INT), 12), 2,
               "12 bytes of DOUBLE_INT: 2");
    TAP_EQ_INT(fy_dtype_elements(T(MPI_DOUBLE_INT), 20), 3,
               "20 bytes of DOUBLE_INT: 3");
    TAP_EQ_INT(fy_dtype_elements(T(MPI_SHORT_INT), 14), 5,
               "14 bytes of SHORT_INT: 5");
    TAP_EQ_INT(fy_dtype_elements(T(MPI_SHORT_INT), 13), -1,
               "13 bytes of SHORT_INT: undefined");
    struct fy_dtype *dt = vec(3, 2, 16, T(MPI_SHORT));
    TAP_EQ_INT(fy_dtype_elements(dt, 12 + 6), 9, "vector of shorts, 1.5 el");
    TAP_EQ_INT(fy_dtype_element_bytes(dt, 9), 18, "and back to bytes");
    fy_dtype_release(dt);
    TAP_EQ_INT(fy_dtype_element_bytes(T(MPI_SHORT_INT), 5), 14,
               "5 elements of SHORT_INT are 14 bytes");
    fy_dtype_contiguous(0, Ti, &dt);
    TAP_EQ_INT(fy_dtype_elements(dt, 0), 0, "empty type, no data: 0");
    TAP_EQ_INT(fy_dtype_elements(dt, 4), -1, "empty type, data: undefined");
    fy_dtype_release(dt);
}

/* ---- reductions ---------------------------------------------------------- */

static int apply(MPI_Op op, const void *in, void *io, MPI_Count n,
                 MPI_Datatype t)
{
    return fy_op_apply(fy_op_get(op), in, io, n, T(t));
}

static void test_ops(void)
{
    {
        int in[4] = {1, -5, 7, INT_MAX}, io[4] = {10, 3, 7, 1};
        int r[4];
        memcpy(r, io, sizeof r);
        apply(MPI_SUM, in, r, 4, MPI_INT);
        TAP_OK(r[0] == 11 && r[1] == -2 && r[2] == 14 && r[3] == INT_MIN,
               "SUM int (wraps without UB)");
        memcpy(r, io, sizeof r);
        apply(MPI_PROD, in, r, 3, MPI_INT);
        TAP_OK(r[0] == 10 && r[1] == -15 && r[2] == 49, "PROD int");
        memcpy(r, io, sizeof r);
        apply(MPI_MAX, in, r, 4, MPI_INT);
        TAP_OK(r[0] == 10 && r[1] == 3 && r[2] == 7 && r[3] == INT_MAX,
               "MAX int");
        memcpy(r, io, sizeof r);
        apply(MPI_MIN, in, r, 4, MPI_INT);
        TAP_OK(r[0] == 1 && r[1] == -5 && r[2] == 7 && r[3] == 1, "MIN int");
        memcpy(r, io, sizeof r);
        apply(MPI_BAND, in, r, 4, MPI_INT);
        TAP_OK(r[0] == (1 & 10) && r[1] == (-5 & 3), "BAND int");
        memcpy(r, io, sizeof r);
        apply(MPI_BXOR, in, r, 4, MPI_INT);
        TAP_OK(r[0] == (1 ^ 10) && r[3] == (INT_MAX ^ 1), "BXOR int");
        memcpy(r, io, sizeof r);
        apply(MPI_BOR, in, r, 4, MPI_INT);
        TAP_OK(r[1] == (-5 | 3), "BOR int");
        int a[3] = {0, 2, 0}, b[3] = {0, 0, 5};
        memcpy(r, b, sizeof b);
        apply(MPI_LAND, a, r, 3, MPI_INT);
        TAP_OK(r[0] == 0 && r[1] == 0 && r[2] == 0, "LAND int");
        memcpy(r, b, sizeof b);
        apply(MPI_LOR, a, r, 3, MPI_INT);
        TAP_OK(r[0] == 0 && r[1] == 1 && r[2] == 1, "LOR int");
        memcpy(r, b, sizeof b);
        apply(MPI_LXOR, a, r, 3, MPI_INT);
        TAP_OK(r[0] == 0 && r[1] == 1 && r[2] == 1, "LXOR int");
    }
    {
        uint8_t in[2] = {200, 16}, io[2] = {100, 16};
        apply(MPI_SUM, in, io, 2, MPI_UINT8_T);
        TAP_OK(io[0] == 44 && io[1] == 32, "SUM uint8 wraps");
        int16_t a[1] = {300}, b[1] = {300};
        apply(MPI_PROD, a, b, 1, MPI_INT16_T);
        TAP_EQ_INT(b[0], (int16_t)(uint16_t)(300 * 300), "PROD int16 wraps");
        int64_t c[1] = {INT64_MAX}, d[1] = {5};
        apply(MPI_MIN, c, d, 1, MPI_INT64_T);
        TAP_EQ_INT(d[0], 5, "MIN int64");
        unsigned long long e[1] = {ULLONG_MAX}, f[1] = {2};
        apply(MPI_SUM, e, f, 1, MPI_UNSIGNED_LONG_LONG);
        TAP_EQ_INT(f[0], 1, "SUM unsigned long long wraps");
        MPI_Aint g[1] = {40}, h[1] = {2};
        apply(MPI_SUM, g, h, 1, MPI_AINT);
        TAP_EQ_INT(h[0], 42, "SUM MPI_AINT");
    }
    {
        double in[3] = {1.5, -2.0, 4.0}, io[3] = {2.0, 3.0, 0.25};
        apply(MPI_SUM, in, io, 3, MPI_DOUBLE);
        TAP_OK(io[0] == 3.5 && io[1] == 1.0 && io[2] == 4.25, "SUM double");
        apply(MPI_PROD, in, io, 3, MPI_DOUBLE);
        TAP_OK(io[0] == 5.25 && io[1] == -2.0 && io[2] == 17.0, "PROD double");
        apply(MPI_MAX, in, io, 3, MPI_DOUBLE);
        TAP_OK(io[0] == 5.25 && io[1] == -2.0 && io[2] == 17.0, "MAX double");
        float fi[2] = {1.0f, -1.0f}, fo[2] = {0.5f, 0.5f};
        apply(MPI_MIN, fi, fo, 2, MPI_FLOAT);
        TAP_OK(fo[0] == 0.5f && fo[1] == -1.0f, "MIN float");
        long double li[1] = {2.0L}, lo[1] = {3.0L};
        apply(MPI_PROD, li, lo, 1, MPI_LONG_DOUBLE);
        TAP_OK(lo[0] == 6.0L, "PROD long double");
    }
    {
        double _Complex in[2] = {1.0 + 2.0 * I, 2.0},
                        io[2] = {3.0 - 1.0 * I, 1.0 * I};
        apply(MPI_SUM, in, io, 2, MPI_C_DOUBLE_COMPLEX);
        TAP_OK(io[0] == 4.0 + 1.0 * I && io[1] == 2.0 + 1.0 * I,
               "SUM double complex");
        apply(MPI_PROD, in, io, 2, MPI_C_DOUBLE_COMPLEX);
        TAP_OK(io[0] == (1.0 + 2.0 * I) * (4.0 + 1.0 * I) &&
                   io[1] == 2.0 * (2.0 + 1.0 * I),
               "PROD double complex");
        float _Complex fi[1] = {1.0f * I}, fo[1] = {1.0f * I};
        apply(MPI_PROD, fi, fo, 1, MPI_C_FLOAT_COMPLEX);
        TAP_OK(fo[0] == -1.0f, "PROD float complex");
    }
    {
        _Bool in[4] = {0, 0, 1, 1}, io[4] = {0, 1, 0, 1}, r[4];
        memcpy(r, io, sizeof r);
        apply(MPI_LAND, in, r, 4, MPI_C_BOOL);
        TAP_OK(!r[0] && !r[1] && !r[2] && r[3], "LAND C_BOOL");
        memcpy(r, io, sizeof r);
        apply(MPI_LOR, in, r, 4, MPI_C_BOOL);
        TAP_OK(!r[0] && r[1] && r[2] && r[3], "LOR C_BOOL");
        memcpy(r, io, sizeof r);
        apply(MPI_LXOR, in, r, 4, MPI_C_BOOL);
        TAP_OK(!r[0] && r[1] && r[2] && !r[3], "LXOR C_BOOL");
        unsigned char bi[2] = {0xf0, 0x0f}, bo[2] = {0x3c, 0x3c};
        apply(MPI_BAND, bi, bo, 2, MPI_BYTE);
        TAP_OK(bo[0] == 0x30 && bo[1] == 0x0c, "BAND BYTE");
        apply(MPI_BOR, bi, bo, 2, MPI_BYTE);
        TAP_OK(bo[0] == 0xf0 && bo[1] == 0x0f, "BOR BYTE");
        apply(MPI_BXOR, bi, bo, 2, MPI_BYTE);
        TAP_OK(bo[0] == 0 && bo[1] == 0, "BXOR BYTE");
    }
    {
        struct {
            double v;
            int i;
        } in[3] = {{1.0, 5}, {2.0, 1}, {7.0, 9}},
          io[3] = {{3.0, 2}, {2.0, 4}, {7.0, 3}};
        apply(MPI_MAXLOC, in, io, 3, MPI_DOUBLE_INT);
        TAP_OK(io[0].v == 3.0 && io[0].i == 2 && io[1].v == 2.0 &&
                   io[1].i == 1 && io[2].v == 7.0 && io[2].i == 3,
               "MAXLOC DOUBLE_INT (ties keep the lower index)");
        apply(MPI_MINLOC, in, io, 3, MPI_DOUBLE_INT);
        TAP_OK(io[0].v == 1.0 && io[0].i == 5 && io[1].i == 1 && io[2].i == 3,
               "MINLOC DOUBLE_INT");
        int pi[4] = {4, 0, -1, 7}, po[4] = {4, 3, 0, 2};
        apply(MPI_MINLOC, pi, po, 2, MPI_2INT);
        TAP_OK(po[0] == 4 && po[1] == 0 && po[2] == -1 && po[3] == 7,
               "MINLOC 2INT");
        struct {
            short v;
            int i;
        } si[1] = {{-3, 8}}, so[1] = {{-4, 1}};
        apply(MPI_MAXLOC, si, so, 1, MPI_SHORT_INT);
        TAP_OK(so[0].v == -3 && so[0].i == 8, "MAXLOC SHORT_INT");
        struct {
            long double v;
            int i;
        } li[1] = {{1.0L, 8}}, lo[1] = {{1.0L, 3}};
        apply(MPI_MINLOC, li, lo, 1, MPI_LONG_DOUBLE_INT);
        TAP_OK(lo[0].i == 3, "MINLOC LONG_DOUBLE_INT tie");
        /* A contiguous of pairs reduces pairwise. */
        struct fy_dtype *c2;
        fy_dtype_contiguous(2, T(MPI_DOUBLE_INT), &c2);
        struct {
            double v;
            int i;
        } a[2] = {{1, 1}, {5, 1}}, b[2] = {{3, 2}, {4, 2}};
        int rc = fy_op_apply(fy_op_get(MPI_MAXLOC), a, b, 1, c2);
        TAP_OK(rc == 0 && b[0].v == 3 && b[0].i == 2 && b[1].v == 5 &&
                   b[1].i == 1,
               "MAXLOC on contiguous(2, DOUBLE_INT)");
        fy_dtype_release(c2);
    }
    {
        /* A vector of ints: data reduced, gaps untouched. */
        struct fy_dtype *v = vec(3, 1, 8, T(MPI_INT));
        int in[6] = {1, 100, 2, 100, 3, 100}, io[6] = {10, -1, 20, -1, 30, -1};
        int rc = fy_op_apply(fy_op_get(MPI_SUM), in, io, 1, v);
        TAP_OK(rc == 0 && io[0] == 11 && io[2] == 22 && io[4] == 33 &&
                   io[1] == -1 && io[3] == -1 && io[5] == -1,
               "SUM on a vector of int leaves the gaps alone");
        rc = fy_op_apply(fy_op_get(MPI_REPLACE), in, io, 1, v);
        TAP_OK(rc == 0 && io[0] == 1 && io[4] == 3 && io[1] == -1,
               "REPLACE on a vector");
        int keep[6];
        memcpy(keep, io, sizeof keep);
        fy_op_apply(fy_op_get(MPI_NO_OP), in, io, 1, v);
        TAP_EQ_MEM(io, keep, sizeof keep, "NO_OP changes nothing");
        fy_dtype_release(v);
    }
    {
        /* Elements at odd offsets (struct{char, int@1}). */
        MPI_Count bl[2] = {1, 1};
        MPI_Aint d[2] = {0, 1};
        struct fy_dtype *ts[2] = {T(MPI_CHAR), T(MPI_INT)};
        struct fy_dtype *s = strct(2, bl, d, ts);
        unsigned char in[16] = {0}, io[16] = {0};
        int x = 40, y = 2;
        in[0] = 1;
        io[0] = 2;
        memcpy(in + 1, &x, 4);
        memcpy(io + 1, &y, 4);
        int rc = fy_op_apply(fy_op_get(MPI_SUM), in, io, 1, s);
        int got;
        memcpy(&got, io + 1, 4);
        TAP_OK(rc == 0 && io[0] == 3 && got == 42,
               "SUM on a struct with an unaligned int");
        fy_dtype_release(s);
    }
}

static void test_op_validity(void)
{
    static const struct {
        MPI_Op op;
        MPI_Datatype t;
        bool ok;
        const char *what;
    } cases[] = {
        {MPI_SUM, MPI_INT, true, "SUM int"},
        {MPI_MAX, MPI_CHAR, true, "MAX char"},
        {MPI_BAND, MPI_FLOAT, false, "BAND float"},
        {MPI_LAND, MPI_DOUBLE, false, "LAND double"},
        {MPI_LXOR, MPI_FLOAT, false, "LXOR float"},
        {MPI_SUM, MPI_C_BOOL, false, "SUM C_BOOL"},
        {MPI_LAND, MPI_C_BOOL, true, "LAND C_BOOL"},
        {MPI_MAX, MPI_C_DOUBLE_COMPLEX, false, "MAX complex"},
        {MPI_PROD, MPI_C_LONG_DOUBLE_COMPLEX, true, "PROD long double complex"},
        {MPI_MAX, MPI_BYTE, false, "MAX byte"},
        {MPI_BXOR, MPI_BYTE, true, "BXOR byte"},
        {MPI_SUM, MPI_PACKED, false, "SUM packed"},
        {MPI_BOR, MPI_WCHAR, false, "BOR wchar"},
        {MPI_MAXLOC, MPI_INT, false, "MAXLOC int"},
        {MPI_MAXLOC, MPI_FLOAT_INT, true, "MAXLOC FLOAT_INT"},
        {MPI_MINLOC, MPI_2INT, true, "MINLOC 2INT"},
        {MPI_SUM, MPI_2INT, false, "SUM 2INT"},
        {MPI_MAX, MPI_DOUBLE_INT, false, "MAX DOUBLE_INT"},
        {MPI_REPLACE, MPI_INT, false, "REPLACE in a collective"},
        {MPI_SUM, MPI_AINT, true, "SUM AINT"},
    };
    for (size_t k = 0; k < FY_ARRAY_LEN(cases); k++)
        TAP_EQ_INT(fy_op_valid_for(fy_op_get(cases[k].op), T(cases[k].t)),
                   cases[k].ok, "valid_for: %s", cases[k].what);
    TAP_OK(fy_op_valid_for_accumulate(fy_op_get(MPI_REPLACE), T(MPI_INT)) &&
               fy_op_valid_for_accumulate(fy_op_get(MPI_NO_OP), T(MPI_BYTE)),
           "REPLACE/NO_OP allowed for accumulate");
    float f[2] = {1, 2}, g[2] = {3, 4};
    TAP_EQ_INT(apply(MPI_BAND, f, g, 2, MPI_FLOAT), -EINVAL,
               "apply rejects BAND on float");
    TAP_OK(g[0] == 3 && g[1] == 4, "and leaves inout alone");
    TAP_OK(fy_op_get(MPI_OP_NULL) == NULL &&
               fy_op_get((MPI_Op)0x5800000f) == NULL,
           "invalid op handles rejected");
    /* A mixed struct is valid only if every basic type is. */
    MPI_Count bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 4};
    struct fy_dtype *ts[2] = {T(MPI_INT), T(MPI_FLOAT)};
    struct fy_dtype *s = strct(2, bl, d, ts);
    TAP_OK(fy_op_valid_for(fy_op_get(MPI_SUM), s) &&
               !fy_op_valid_for(fy_op_get(MPI_BAND), s),
           "struct{int,float}: SUM yes, BAND no");
    fy_dtype_release(s);
}

/* ---- user ops ------------------------------------------------------------ */

static MPI_Datatype seen_type;
static int seen_len;

static void user_absmax(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    seen_type = *dt;
    seen_len += *len;
    int *a = in, *b = inout;
    for (int i = 0; i < *len * 2; i++) { /* each element is 2 ints */
        int x = abs(a[i]), y = abs(b[i]);
        b[i] = x > y ? x : y;
    }
}

static void test_user_op(void)
{
    struct fy_op *op;
    TAP_EQ_INT(fy_op_create(user_absmax, false, &op), 0, "op_create");
    TAP_OK(fy_op_get(op->handle) == op && !op->builtin && !op->commute,
           "user op resolves by handle");
    struct fy_dtype *pair;
    fy_dtype_contiguous(2, T(MPI_INT), &pair);
    TAP_EQ_INT(fy_dtype_register(pair), 0, "register a type");
    int in[4] = {-7, 1, 2, -9}, io[4] = {3, -4, 5, 6};
    seen_len = 0;
    TAP_EQ_INT(fy_op_apply(op, in, io, 2, pair), 0, "apply user op");
    TAP_OK(io[0] == 7 && io[1] == 4 && io[2] == 5 && io[3] == 9,
           "user op result");
    TAP_OK(seen_type == pair->handle && seen_len == 2,
           "user fn got the datatype handle and the count");
    TAP_OK(fy_op_valid_for(op, T(MPI_PACKED)), "user ops take any type");
    MPI_Op h = op->handle;
    fy_op_retain(op); /* a pending operation */
    fy_op_free_handle(op);
    TAP_OK(fy_op_get(h) == NULL, "freed op handle no longer resolves");
    TAP_EQ_INT(fy_op_apply(op, in, io, 1, pair), 0,
               "pending operation still uses the op");
    fy_op_release(op);
    fy_dtype_free_handle(pair);
}

/* ---- reference counts and handles ------------------------------------- */

static void test_refcount(void)
{
    struct fy_dtype *dt = vec(4, 1, 8, T(MPI_INT));
    TAP_EQ_INT(fy_dtype_register(dt), 0, "register");
    MPI_Datatype h = dt->handle;
    TAP_OK(((unsigned)h & 0xfc000000u) == 0x8c000000u &&
               ((unsigned)h & 0x03ffffffu) >= 5,
           "derived handle is direct and above the pair types");
    TAP_OK(fy_dtype_get(h) == dt, "handle resolves");
    TAP_OK(fy_dtype_get(MPI_FLOAT_INT)->pair == FY_PAIR_FLOAT_INT,
           "pair handles still resolve to pairs");
    fy_dtype_retain(dt); /* a pending send */
    fy_dtype_free_handle(dt);
    TAP_OK(fy_dtype_get(h) == NULL, "freed handle no longer resolves");
    int src[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[4] = {0};
    fy_dtype_pack(src, 1, dt, out);
    TAP_OK(out[0] == 1 && out[1] == 3 && out[3] == 7,
           "pending operation can still use the type");
    fy_dtype_free_handle(dt); /* a second free is ignored */
    TAP_EQ_INT(dt->refcount, 1, "double free does not drop the pending ref");
    fy_dtype_release(dt); /* last reference: memory freed (ASan checks) */
    struct fy_dtype *again = vec(2, 1, 8, T(MPI_INT));
    fy_dtype_register(again);
    TAP_OK(again->handle == h, "handle index reused once fully released");
    struct fy_dtype *b = T(MPI_INT);
    int before = b->refcount;
    fy_dtype_release(b);
    fy_dtype_free_handle(b);
    TAP_OK(fy_dtype_get(MPI_INT) == b && b->refcount == before,
           "predefined types are never freed");
    fy_dtype_free_handle(again);
}

/* ---- MPI_Status count encoding --------------------------------------------
 */

static void test_status(void)
{
    MPI_Status st;
    memset(&st, 0, sizeof st);
    fy_status_set_bytes(&st, 5);
    TAP_OK(st.count_lo == 5 && st.count_hi_and_cancelled == 0,
           "small count: low word only");
    fy_status_set_cancelled_flag(&st, true);
    fy_status_set_bytes(&st, 0x300000005L);
    TAP_OK(st.count_lo == 5 && st.count_hi_and_cancelled == 7,
           "high bits shifted by one above the cancelled flag (MPICH)");
    TAP_EQ_INT(fy_status_bytes(&st), 0x300000005L, "decode high count");
    TAP_OK(fy_status_cancelled(&st), "cancelled flag kept");
    fy_status_set_bytes(&st, 0x80000005L);
    TAP_OK(st.count_lo == (int)0x80000005u && st.count_hi_and_cancelled == 1,
           "bit 31 lives in count_lo");
    TAP_EQ_INT(fy_status_bytes(&st), 0x80000005L, "decode bit 31");
    fy_status_set_cancelled_flag(&st, false);
    TAP_EQ_INT(fy_status_bytes(&st), 0x80000005L, "uncancel keeps count");
}

int main(void)
{
    TAP_EQ_INT(fy_dtype_init(), 0, "fy_dtype_init");
    test_bounds();
    test_pack();
    test_elements();
    test_ops();
    test_op_validity();
    test_user_op();
    test_refcount();
    test_status();
    fy_dtype_finalize();
    return tap_done();
}
