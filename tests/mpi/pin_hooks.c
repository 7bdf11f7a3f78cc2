/* SPDX-License-Identifier: MIT */
/* The pin-down cache's interposers in a real MPI program: free, realloc,
 * munmap, mremap, madvise, mmap, brk and sbrk must resolve to libmpi's
 * (src/xfer/pin_hooks.c; or a sanitizer runtime's, which comes first in a
 * sanitizer build) and behave exactly as libc's: blocks keep their bytes
 * across realloc, mappings move and go away, the break moves and comes
 * back, and a 4 MiB message still arrives byte for byte afterwards. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mpitest.h"

static void check_from_libmpi(const char *name)
{
    void *sym = dlsym(RTLD_DEFAULT, name);
    Dl_info info;
    MT_CHECK(sym && dladdr(sym, &info) && info.dli_fname, "%s: not found",
             name);
    const char *f = info.dli_fname;
    if (strstr(f, "libasan") || strstr(f, "libtsan"))
        return; /* the sanitizer interposes first; libmpi's come next */
    MT_CHECK(strstr(f, "libmpi") != NULL,
             "%s resolves to %s, not libmpi's interposer", name, f);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    static const char *const names[] = {"free",   "realloc", "munmap",
                                        "mremap", "madvise", "mmap",
                                        "brk",    "sbrk"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        check_from_libmpi(names[i]);

    /* malloc/realloc/free: large (mmap-backed) and small blocks. */
    size_t n = 4 * MT_MIB;
    char *p = mt_malloc(n);
    mt_fill(p, n, 7);
    p = realloc(p, 2 * n);
    MT_CHECK(p != NULL, "realloc to 8 MiB");
    MT_CHECK(mt_find_bad(p, n, 7) == n, "realloc kept the bytes");
    p = realloc(p, 100);
    MT_CHECK(p != NULL, "realloc down to 100 B");
    MT_CHECK(mt_find_bad(p, 100, 7) == 100, "shrunk block kept its bytes");
    free(p);
    free(NULL);

    /* mmap, madvise(DONTNEED) (anonymous private pages read back as
     * zeros), mremap (moved), munmap. */
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    MT_CHECK(m != MAP_FAILED, "mmap");
    memset(m, 0x5a, 4 * pg);
    MT_CHECK(madvise(m, pg, MADV_DONTNEED) == 0, "madvise");
    MT_CHECK(m[0] == 0 && m[pg] == 0x5a, "MADV_DONTNEED dropped one page");
    char *m2 = mremap(m, 4 * pg, 64 * pg, MREMAP_MAYMOVE);
    MT_CHECK(m2 != MAP_FAILED, "mremap");
    MT_CHECK(m2[pg] == 0x5a && m2[4 * pg - 1] == 0x5a, "mremap kept pages");
    MT_CHECK(munmap(m2, 64 * pg) == 0, "munmap");

    /* The break: up one page and back. */
    void *cur = sbrk(0);
    MT_CHECK(cur != (void *)-1, "sbrk(0)");
    MT_CHECK(sbrk((intptr_t)pg) == cur, "sbrk up");
    MT_CHECK(brk(cur) == 0 && sbrk(0) == cur, "brk back");

    /* A message after all that. */
    if (mt_size >= 2 && mt_rank < 2) {
        char *buf = mt_malloc(n);
        if (mt_rank == 0) {
            mt_fill(buf, n, 11);
            MT_MPI(MPI_Send(buf, (int)n, MPI_BYTE, 1, 3, MPI_COMM_WORLD));
        } else {
            memset(buf, 0, n);
            MT_MPI(MPI_Recv(buf, (int)n, MPI_BYTE, 0, 3, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            size_t bad = mt_find_bad(buf, n, 11);
            MT_CHECK(bad == n, "4 MiB message wrong at byte %zu", bad);
        }
        free(buf);
    }
    return mt_finish("pin_hooks");
}
