/* SPDX-License-Identifier: MIT */
/* Interposers of the calls that take memory away from a process (munmap,
 * mremap, madvise, mmap with MAP_FIXED, brk, sbrk, free, realloc,
 * reallocarray): each
 * invalidates the pin-down cache's registrations of that memory
 * (fy_pin_invalidate) and then calls the real function. Why interposition
 * and when it is in effect: see src/xfer/pin.c.
 *
 * Linked into libmpi (exported by src/libmpi.map, the only non-MPI names it
 * exports), the pin unit test and ferry-bench, and deliberately kept out of
 * the static archive the other programs link, which must not replace their
 * own free. The real functions come from dlsym(RTLD_NEXT) (the next
 * definition: libc's, or a sanitizer's or another allocator's in between),
 * looked up in a constructor or on first use; a call made inside that
 * look-up uses the raw system call (glibc's realloc), and a free made
 * inside it leaks the block rather than guess an allocator.
 * Fast path when no registration is cached anywhere: one relaxed load. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "xfer/pin.h"

/* Not instrumented: a sanitizer's runtime calls free (through dlsym) while
 * it starts, before its shadow memory is mapped. */
#define FY_NOSAN __attribute__((no_sanitize("address", "thread")))
#define FY_HOOK __attribute__((visibility("default"))) FY_NOSAN

/* ThreadSanitizer's runtime frees through the global free while it sets a
 * new thread up, before that thread may run instrumented code (the cache's
 * locks): a ThreadSanitizer build interposes everything but free and
 * realloc (only the unit test is built so; libmpi under a sanitizer is
 * never the process' free anyway, the runtime comes first). */
#if defined(__SANITIZE_THREAD__)
#define FY_PIN_HOOK_FREE 0
#else
#define FY_PIN_HOOK_FREE 1
#endif

/* Marks that the interposers are linked (pin.c has a weak reference). */
__attribute__((visibility("hidden"))) const int fy_pin_hooks_linked = 1;

typedef int (*munmap_fn)(void *, size_t);
typedef void *(*mremap_fn)(void *, size_t, size_t, int, ...);
typedef int (*madvise_fn)(void *, size_t, int);
typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*brk_fn)(void *);
typedef void *(*sbrk_fn)(intptr_t);
typedef void (*free_fn)(void *);
typedef void *(*realloc_fn)(void *, size_t);
typedef void *(*reallocarray_fn)(void *, size_t, size_t);
typedef size_t (*usable_fn)(void *);

static struct {
    munmap_fn munmap;
    mremap_fn mremap;
    madvise_fn madvise;
    mmap_fn mmap;
    brk_fn brk;
    sbrk_fn sbrk;
    free_fn free;
    realloc_fn realloc;
    reallocarray_fn reallocarray;
    usable_fn usable;
} real;

/* Set while this thread runs dlsym, which may allocate and free: such a
 * free leaks (harmless, start-up only), such a realloc is glibc's. */
static _Thread_local int resolving;

/* glibc's own realloc, for a realloc inside dlsym. */
extern void *__libc_realloc(void *, size_t);

FY_NOSAN static void hooks_resolve(void)
{
    if (resolving)
        return;
    resolving = 1;
    real.munmap = (munmap_fn)dlsym(RTLD_NEXT, "munmap");
    real.mremap = (mremap_fn)dlsym(RTLD_NEXT, "mremap");
    real.madvise = (madvise_fn)dlsym(RTLD_NEXT, "madvise");
    real.mmap = (mmap_fn)dlsym(RTLD_NEXT, "mmap");
    real.brk = (brk_fn)dlsym(RTLD_NEXT, "brk");
    real.sbrk = (sbrk_fn)dlsym(RTLD_NEXT, "sbrk");
    real.usable = (usable_fn)dlsym(RTLD_NEXT, "malloc_usable_size");
    real.realloc = (realloc_fn)dlsym(RTLD_NEXT, "realloc");
    real.reallocarray = (reallocarray_fn)dlsym(RTLD_NEXT, "reallocarray");
    real.free = (free_fn)dlsym(RTLD_NEXT, "free");
    resolving = 0;
}

/* Looked up early (libraries' constructors may already call these), and
 * again on first use by any hook that finds its pointer unset. */
__attribute__((constructor)) static void hooks_init(void)
{
    hooks_resolve();
}

#define HOOK_NEED(fn)                                                          \
    do {                                                                       \
        if (!real.fn)                                                          \
            hooks_resolve();                                                   \
    } while (0)

/* The interposers under internal names (their own addresses, for
 * fy_pin_hooks_active's check), exported under the libc names below. */
__attribute__((visibility("hidden"))) int fy_pin_hook_munmap(void *addr,
                                                             size_t len);
__attribute__((visibility("hidden"))) void fy_pin_hook_free(void *p);
__attribute__((visibility("hidden"))) int
fy_pin_hook_madvise(void *addr, size_t len, int advice);

FY_NOSAN int fy_pin_hook_munmap(void *addr, size_t len)
{
    fy_pin_invalidate(addr, len);
    HOOK_NEED(munmap);
    if (real.munmap)
        return real.munmap(addr, len);
    return (int)syscall(SYS_munmap, addr, len);
}

FY_NOSAN int fy_pin_hook_madvise(void *addr, size_t len, int advice)
{
    switch (advice) {
    case MADV_DONTNEED:
    case MADV_FREE:
    case MADV_REMOVE:
#ifdef MADV_DONTNEED_LOCKED
    case MADV_DONTNEED_LOCKED:
#endif
        fy_pin_invalidate(addr, len);
        break;
    default:
        break;
    }
    HOOK_NEED(madvise);
    if (real.madvise)
        return real.madvise(addr, len, advice);
    return (int)syscall(SYS_madvise, addr, len, advice);
}

#if FY_PIN_HOOK_FREE
FY_NOSAN void fy_pin_hook_free(void *p)
{
    if (!p)
        return;
    HOOK_NEED(free);
    /* malloc_usable_size only when something is cached: a sanitizer's
     * allocator rejects blocks of the loader's from before it started. */
    if (real.usable && fy_pin_any_cached())
        fy_pin_invalidate(p, real.usable(p));
    if (real.free)
        real.free(p);
    /* else: before the constructor (inside dlsym): leak, see above */
}

#endif

FY_HOOK int munmap(void *addr, size_t len)
    __attribute__((alias("fy_pin_hook_munmap")));
FY_HOOK int madvise(void *addr, size_t len, int advice)
    __attribute__((alias("fy_pin_hook_madvise")));
#if FY_PIN_HOOK_FREE
FY_HOOK void free(void *p) __attribute__((alias("fy_pin_hook_free")));
#endif

FY_HOOK void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
    void *new_addr = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        new_addr = va_arg(ap, void *);
        va_end(ap);
        fy_pin_invalidate(new_addr, new_len); /* replaced there */
    }
    fy_pin_invalidate(old, old_len);
    HOOK_NEED(mremap);
    if (real.mremap)
        return real.mremap(old, old_len, new_len, flags, new_addr);
    return (void *)syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
}

FY_HOOK void *mmap(void *addr, size_t len, int prot, int flags, int fd,
                   off_t off)
{
    if (flags & MAP_FIXED) /* replaces whatever was mapped there */
        fy_pin_invalidate(addr, len);
    HOOK_NEED(mmap);
    if (real.mmap)
        return real.mmap(addr, len, prot, flags, fd, off);
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

FY_HOOK void *mmap64(void *addr, size_t len, int prot, int flags, int fd,
                     off_t off) __attribute__((alias("mmap")));

FY_HOOK int brk(void *addr)
{
    HOOK_NEED(brk);
    if (!real.brk) {
        errno = ENOMEM;
        return -1;
    }
    void *cur = real.sbrk ? real.sbrk(0) : NULL;
    if (cur && (uintptr_t)addr < (uintptr_t)cur)
        fy_pin_invalidate(addr, (uintptr_t)cur - (uintptr_t)addr);
    return real.brk(addr);
}

FY_HOOK void *sbrk(intptr_t incr)
{
    HOOK_NEED(sbrk);
    if (!real.sbrk) {
        errno = ENOMEM;
        return (void *)-1;
    }
    if (incr < 0) {
        void *cur = real.sbrk(0);
        if (cur != (void *)-1)
            fy_pin_invalidate((char *)cur + incr, (size_t)-incr);
    }
    return real.sbrk(incr);
}

#if FY_PIN_HOOK_FREE
FY_HOOK void *realloc(void *p, size_t n)
{
    /* The block may move (or shrink in place and give pages back). */
    HOOK_NEED(realloc);
    if (p && real.usable && fy_pin_any_cached())
        fy_pin_invalidate(p, real.usable(p));
    if (real.realloc)
        return real.realloc(p, n);
    return __libc_realloc(p, n);
}

/* glibc's reallocarray reallocates inside libc (no call through the
 * global realloc), so it is interposed too. */
FY_HOOK void *reallocarray(void *p, size_t n, size_t size)
{
    HOOK_NEED(reallocarray);
    if (p && real.usable && fy_pin_any_cached())
        fy_pin_invalidate(p, real.usable(p));
    if (real.reallocarray)
        return real.reallocarray(p, n, size);
    if (size && n > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_realloc(p, n * size);
}
#endif

__attribute__((visibility("hidden"))) const void *
fy_pin_hooks_self(const char *name);
const void *fy_pin_hooks_self(const char *name)
{
    if (!strcmp(name, "munmap"))
        return (const void *)fy_pin_hook_munmap;
#if FY_PIN_HOOK_FREE
    if (!strcmp(name, "free"))
        return (const void *)fy_pin_hook_free;
#endif
    if (!strcmp(name, "madvise"))
        return (const void *)fy_pin_hook_madvise;
    return NULL;
}
