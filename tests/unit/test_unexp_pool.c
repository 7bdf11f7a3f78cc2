/* SPDX-License-Identifier: MIT */
/* Unit test of the memory of unexpected entries (src/p2p/p2p.c,
 * FERRY_UNEXP_CACHE): an entry of any room from 4 KiB + 1 byte to 4 MiB
 * holds its header and every byte of its room (written end to end: the
 * AddressSanitizer run catches a class too small), rooms of up to 4 KiB
 * are plain malloc, a freed pooled entry is handed out again for a room
 * of its class, and with the cache at 0 nothing is kept. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "p2p/p2p_impl.h"

static void test_rooms(void)
{
    int ok = 1;
    for (uint64_t room = 4097; room <= ((uint64_t)4 << 20);
         room += room / 7 + 13) {
        struct fy_unexp *u = fy_p2p_unexp_alloc(room);
        if (!u || u->pool == 0) {
            ok = 0;
            break;
        }
        memset(u->data, 0xa5, (size_t)room); /* every byte of the room */
        if (u->data[room - 1] != 0xa5)
            ok = 0;
        fy_p2p_unexp_free(u);
    }
    TAP_OK(ok, "rooms 4 KiB + 1 .. 4 MiB: pooled, every byte usable");
    struct fy_unexp *small = fy_p2p_unexp_alloc(4096);
    TAP_OK(small && small->pool == 0, "a 4 KiB room is plain malloc");
    if (small) {
        memset(small->data, 1, 4096);
        fy_p2p_unexp_free(small);
    }
    struct fy_unexp *none = fy_p2p_unexp_alloc(0);
    TAP_OK(none && none->pool == 0, "an empty room is plain malloc");
    fy_p2p_unexp_free(none);
}

static void test_reuse(void)
{
    fy_p2p.unexp_cache = (uint64_t)1 << 20;
    struct fy_unexp *a = fy_p2p_unexp_alloc(100000);
    TAP_OK(a != NULL, "alloc 100000");
    int cls = a ? a->pool : 0;
    fy_p2p_unexp_free(a);
    struct fy_unexp *b = fy_p2p_unexp_alloc(99000); /* the same class */
    TAP_OK(b == a && b->pool == cls, "a freed entry is reused by its class");
    memset(b->data, 2, 99000);
    struct fy_unexp *c = fy_p2p_unexp_alloc(100000);
    TAP_OK(c != NULL && c != b, "a second entry of the class is new");
    fy_p2p_unexp_free(b);
    fy_p2p_unexp_free(c);
    /* Both are in the list now (2 x 112 KiB < 1 MiB): two allocations of
     * the class get them back, a third is new. */
    struct fy_unexp *d = fy_p2p_unexp_alloc(100000),
                    *e = fy_p2p_unexp_alloc(100000);
    TAP_OK((d == b || d == c) && (e == b || e == c) && d != e,
           "the list hands back what it kept");
    fy_p2p_unexp_free(d);
    fy_p2p_unexp_free(e);
}

int main(void)
{
    /* The cache is what MPI_Init sets from FERRY_UNEXP_CACHE; 0 here
     * first: nothing kept, every free goes to free(). */
    fy_p2p.unexp_cache = 0;
    test_rooms();
    test_reuse();
    return tap_done();
}
