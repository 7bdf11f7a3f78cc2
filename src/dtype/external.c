/* SPDX-License-Identifier: MIT */
/* The external32 data representation (MPI 13.5.2) for MPI_Pack_external:
 * big-endian, IEEE formats, and the fixed sizes of the standard's table
 * (MPI_LONG and MPI_UNSIGNED_LONG are 4 bytes, MPI_WCHAR 2, MPI_LONG_DOUBLE
 * a 16-byte IEEE quad). Each basic element is converted on its own while
 * walking the type map in packed order. */
#include <errno.h>
#include <float.h>
#include <stdint.h>
#include <string.h>

#include "dtype/dtype.h"
#include "dtype/dtype_int.h"

/* external32 size of one basic element; 0 if undefined there. */
static size_t ext_size(uint32_t b)
{
    switch (b) {
    case FY_B_WCHAR:
        return 2;
    case FY_B_LONG:
    case FY_B_UNSIGNED_LONG:
        return 4;
    case FY_B_LONG_DOUBLE:
        return 16;
    case FY_B_C_LONG_DOUBLE_COMPLEX:
        return 32;
    default:
        return b < FY_B_COUNT_OF ? fy_basic_tab[b].size : 0;
    }
}

MPI_Count fy_dtype_external_size(const struct fy_dtype *dt, MPI_Count count)
{
    MPI_Count per = 0;
    for (uint32_t s = 0; s < dt->nsegs; s++) {
        size_t n = ext_size(dt->segs[s].basic);
        if (n == 0)
            return -EINVAL;
        per += dt->segs[s].count * (MPI_Count)n;
    }
    return per * dt->rep * count;
}

static void put_be(unsigned char *out, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
}

static uint64_t get_be(const unsigned char *in, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = (v << 8) | in[i];
    return v;
}

/* Byte-reverse n bytes (a little-endian host's native to big-endian). */
static void swap_copy(unsigned char *dst, const unsigned char *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = src[n - 1 - i];
}

/* x86's 80-bit extended <-> IEEE binary128: same sign and 15-bit biased
 * exponent; the 64-bit significand's explicit integer bit is dropped. */
static int ldbl_to_ext(unsigned char *out, const unsigned char *in)
{
#if LDBL_MANT_DIG == 64
    uint64_t m, se = 0;
    memcpy(&m, in, 8);
    memcpy(&se, in + 8, 2);
    uint64_t frac = m & ~(1ull << 63);
    uint64_t hi = (se << 48) | (frac >> 15);
    uint64_t lo = frac << 49;
    put_be(out, hi, 8);
    put_be(out + 8, lo, 8);
    return 0;
#elif LDBL_MANT_DIG == 113
    swap_copy(out, in, 16);
    return 0;
#else
    (void)out;
    (void)in;
    return -EINVAL;
#endif
}

static int ldbl_from_ext(unsigned char *out, const unsigned char *in)
{
#if LDBL_MANT_DIG == 64
    uint64_t hi = get_be(in, 8), lo = get_be(in + 8, 8);
    uint64_t se = hi >> 48;
    uint64_t frac = (hi << 15 & ~(1ull << 63)) | (lo >> 49);
    uint64_t m = frac | ((se & 0x7fff) ? 1ull << 63 : 0);
    memset(out, 0, sizeof(long double));
    memcpy(out, &m, 8);
    memcpy(out + 8, &se, 2);
    return 0;
#elif LDBL_MANT_DIG == 113
    swap_copy(out, in, 16);
    return 0;
#else
    (void)out;
    (void)in;
    return -EINVAL;
#endif
}

/* Convert one basic element; to_ext selects the direction. */
static int convert(uint32_t b, unsigned char *native, unsigned char *ext,
                   bool to_ext)
{
    size_t nn = fy_basic_tab[b].size, ne = ext_size(b);
    switch (b) {
    case FY_B_LONG: {
        long v;
        if (to_ext) {
            memcpy(&v, native, sizeof(v));
            if (v < INT32_MIN || v > INT32_MAX)
                return -ERANGE;
            put_be(ext, (uint32_t)(int32_t)v, 4);
        } else {
            v = (int32_t)(uint32_t)get_be(ext, 4);
            memcpy(native, &v, sizeof(v));
        }
        return 0;
    }
    case FY_B_UNSIGNED_LONG:
    case FY_B_WCHAR: {
        /* Unsigned (wchar_t values are code points): zero-extended. */
        uint64_t v = 0;
        if (to_ext) {
            memcpy(&v, native, nn); /* little-endian host: low bytes */
            if (v >> (8 * ne))
                return -ERANGE;
            put_be(ext, v, ne);
        } else {
            v = get_be(ext, ne);
            memcpy(native, &v, nn);
        }
        return 0;
    }
    case FY_B_LONG_DOUBLE:
        return to_ext ? ldbl_to_ext(ext, native) : ldbl_from_ext(native, ext);
    case FY_B_C_LONG_DOUBLE_COMPLEX: {
        size_t h = sizeof(long double);
        int rc = to_ext ? ldbl_to_ext(ext, native) : ldbl_from_ext(native, ext);
        if (rc == 0)
            rc = to_ext ? ldbl_to_ext(ext + 16, native + h)
                        : ldbl_from_ext(native + h, ext + 16);
        return rc;
    }
    case FY_B_C_FLOAT_COMPLEX:
    case FY_B_C_DOUBLE_COMPLEX: {
        /* Two reals, each in IEEE big-endian order. */
        size_t h = nn / 2;
        for (int k = 0; k < 2; k++) {
            if (to_ext)
                swap_copy(ext + k * h, native + k * h, h);
            else
                swap_copy(native + k * h, ext + k * h, h);
        }
        return 0;
    }
    default:
        if (to_ext)
            swap_copy(ext, native, nn);
        else
            swap_copy(native, ext, nn);
        return 0;
    }
}

/* Walk every basic element of 'count' elements of dt at 'buf' in packed
 * order, converting to or from the external32 stream at 'ext'. */
static int walk(unsigned char *buf, MPI_Count count, const struct fy_dtype *dt,
                unsigned char *ext, bool to_ext)
{
    if (fy_dtype_external_size(dt, 1) < 0)
        return -EINVAL;
    for (MPI_Count i = 0; i < count; i++) {
        unsigned char *base = buf + (MPI_Aint)i * dt->extent;
        for (MPI_Count r = 0; r < dt->rep; r++) {
            unsigned char *rb = base + (MPI_Aint)r * dt->rep_stride;
            for (uint32_t s = 0; s < dt->nsegs; s++) {
                const struct fy_dtype_seg *g = &dt->segs[s];
                size_t nn = fy_basic_tab[g->basic].size;
                size_t ne = ext_size(g->basic);
                unsigned char *p = rb + g->disp;
                for (MPI_Count j = 0; j < g->count; j++) {
                    int rc = convert(g->basic, p, ext, to_ext);
                    if (rc)
                        return rc;
                    p += nn;
                    ext += ne;
                }
            }
        }
    }
    return 0;
}

int fy_dtype_pack_external(const void *inbuf, MPI_Count count,
                           const struct fy_dtype *dt, void *out)
{
    /* The walk only reads through 'buf' in this direction. */
    return walk((unsigned char *)(uintptr_t)inbuf, count, dt, out, true);
}

int fy_dtype_unpack_external(const void *in, MPI_Count count,
                             const struct fy_dtype *dt, void *outbuf)
{
    return walk(outbuf, count, dt, (unsigned char *)(uintptr_t)in, false);
}
