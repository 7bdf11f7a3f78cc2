/* SPDX-License-Identifier: MIT */
/* Where the user's buffers live must not matter: stack, static (.bss and
 * initialised .data, including 4 MiB arrays), heap and anonymous mmap
 * memory, at unaligned offsets, as source and as destination in every
 * combination, for every size from 0 bytes to 4 MiB. Guard bytes on both
 * sides of each receive region must stay untouched. */
#include <sys/mman.h>

#include "mpitest.h"

enum kind { K_STACK, K_STATIC, K_HEAP, K_MMAP, K_DATA, NKIND };
static const char *const kind_name[NKIND] = {"stack", "static", "heap", "mmap",
                                             "data"};

#define PAD 128 /* offset room + guard on each side */
#define MAXS (4 * MT_MIB)
#define STACK_MAX (MT_MIB)     /* larger messages skip the stack */
#define DATA_MAX (64 * MT_KIB) /* the initialised .data arrays */

static const int sizes[] = {
    0,    8,           47,          48,           64,     1000,
    4096, 16 * MT_KIB, 64 * MT_KIB, 256 * MT_KIB, MT_MIB, 4 * MT_MIB};
#define NS ((int)(sizeof(sizes) / sizeof(sizes[0])))
static const int offsets[] = {0, 1, 3, 7, 8, 13, 31, 63};

static char static_s[MAXS + 2 * PAD], static_r[MAXS + 2 * PAD];
/* Non-zero initialisers put these in .data (file-backed, private COW). */
static char data_s[DATA_MAX + 2 * PAD] = {1}, data_r[DATA_MAX + 2 * PAD] = {1};
static char *heap_s, *heap_r, *mmap_s, *mmap_r;

static int dest, src;

static char *base_of(enum kind k, int send, char *stack_s, char *stack_r)
{
    switch (k) {
    case K_STACK:
        return send ? stack_s : stack_r;
    case K_STATIC:
        return send ? static_s : static_r;
    case K_HEAP:
        return send ? heap_s : heap_r;
    case K_MMAP:
        return send ? mmap_s : mmap_r;
    case K_DATA:
        return send ? data_s : data_r;
    default:
        return NULL;
    }
}

static int fits(enum kind k, int n)
{
    return (k != K_STACK || n <= STACK_MAX) && (k != K_DATA || n <= DATA_MAX);
}

/* Exchange one message around the ring from kind sk to kind rk. The stack
 * buffers belong to this frame, which lives until the transfer is done. */
static void exchange(int n, enum kind sk, enum kind rk, int soff, int roff,
                     uint32_t seed)
{
    char stack_s[STACK_MAX + 2 * PAD], stack_r[STACK_MAX + 2 * PAD];
    char *s = base_of(sk, 1, stack_s, stack_r) + PAD / 2 + soff;
    char *rbase = base_of(rk, 0, stack_s, stack_r);
    char *r = rbase + PAD / 2 + roff;
    size_t span = (size_t)n + PAD;
    MPI_Request req[2];
    MPI_Status st;
    char what[96];
    int c = -1;

    snprintf(what, sizeof what, "%d bytes %s+%d -> %s+%d", n, kind_name[sk],
             soff, kind_name[rk], roff);
    memset(rbase, 0xC3, span);
    mt_fill(s, (size_t)n, seed + (uint32_t)mt_rank);
    MT_MPI(MPI_Irecv(r, n, MPI_BYTE, src, 0, MPI_COMM_WORLD, &req[0]));
    MT_MPI(MPI_Isend(s, n, MPI_BYTE, dest, 0, MPI_COMM_WORLD, &req[1]));
    MT_MPI(MPI_Wait(&req[0], &st));
    MT_MPI(MPI_Wait(&req[1], MPI_STATUS_IGNORE));
    MPI_Get_count(&st, MPI_BYTE, &c);
    MT_EQ(c, n, what);
    MT_VERIFY(r, (size_t)n, seed + (uint32_t)src, what);
    MT_ALL(rbase, (size_t)(r - rbase), 0xC3, what);
    MT_ALL(r + n, (size_t)(rbase + span - (r + n)), 0xC3, what);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    dest = (mt_rank + 1) % mt_size;
    src = (mt_rank + mt_size - 1) % mt_size;
    heap_s = mt_malloc(MAXS + 2 * PAD);
    heap_r = mt_malloc(MAXS + 2 * PAD);
    mmap_s = mmap(NULL, MAXS + 2 * PAD, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mmap_r = mmap(NULL, MAXS + 2 * PAD, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    MT_CHECK(mmap_s != MAP_FAILED && mmap_r != MAP_FAILED, "mmap failed");

    int k = 0;
    for (int i = 0; i < NS; i++) {
        for (int sk = 0; sk < NKIND; sk++) {
            for (int rk = 0; rk < NKIND; rk++) {
                int n = sizes[i], combo = sk * NKIND + rk;
                if (!fits(sk, n) || !fits(rk, n))
                    continue;
                /* Large messages: a rotating quarter of the combinations
                 * keeps the run short while every pair appears somewhere. */
                if (n >= MT_MIB && combo % 4 != i % 4)
                    continue;
                exchange(n, sk, rk, offsets[k % 8], offsets[(k * 3 + 5) % 8],
                         (uint32_t)(k * 31));
                k++;
            }
        }
    }
    munmap(mmap_s, MAXS + 2 * PAD);
    munmap(mmap_r, MAXS + 2 * PAD);
    free(heap_s);
    free(heap_r);
    return mt_finish("buffers");
}
