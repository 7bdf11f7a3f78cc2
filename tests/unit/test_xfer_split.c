/* SPDX-License-Identifier: MIT */
/* The shared single copy's data path (xfer/split.c): an owner and a helper
 * claim chunks of one transfer from the two ends of a shared claim word.
 * Here both are threads of this process and the "remote" buffer is our
 * own memory (process_vm_readv/writev of our own pid), so every check is
 * deterministic or a race between two real claimers:
 * - the owner alone takes every chunk (from the front) and the helper
 *   that comes after finds none; a helper alone takes every chunk from
 *   the back; each way every byte lands once, guards intact, 'done'
 *   counts every chunk;
 * - owner and helper at once, gets and puts, chunk counts 1-9 and odd
 *   tails, 200 rounds: every byte right, front + back == the chunk count;
 * - a helper of an older generation takes nothing of a newer one, and one
 *   whose chunk count passes the claim word's 16 bits does not help. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "util/util.h"
#include "xfer/shm_layout.h"
#include "xfer/xfer.h"

#define GUARD 64
#define GUARD_BYTE 0xA5
#define MAXLEN ((size_t)1 << 21)

static unsigned char pat(unsigned seed, size_t i)
{
    return (unsigned char)(seed * 11u + i * 37u + (i >> 13) + 5u);
}

static unsigned char *src, *dst; /* MAXLEN + 2 GUARD each */
static _Alignas(64) struct fy_split_ctl ctl;
static uint32_t gen_counter;

static void prepare(size_t len, unsigned seed)
{
    memset(src, GUARD_BYTE, MAXLEN + 2 * GUARD);
    memset(dst, GUARD_BYTE, MAXLEN + 2 * GUARD);
    for (size_t i = 0; i < len; i++)
        src[GUARD + i] = pat(seed, i);
}

/* -1 if the destination holds the pattern and its guards are intact,
 * else the first wrong byte's index in the whole buffer. */
static long verify(size_t len, unsigned seed)
{
    for (size_t i = 0; i < len + 2 * GUARD; i++) {
        bool in = i >= GUARD && i < GUARD + len;
        if (dst[i] != (in ? pat(seed, i - GUARD) : GUARD_BYTE))
            return (long)i;
    }
    return -1;
}

/* A get moves remote (src) into local (dst); a put moves local (src)
 * into remote (dst). */
struct side {
    bool get, owner;
    uint32_t gen;
    uint64_t chunk, want;
    int took;
    pid_t pid; /* 0: ours */
};

static void *run_side(void *arg)
{
    struct side *s = arg;
    uint8_t *local = s->get ? dst + GUARD : src + GUARD;
    uint64_t remote = (uint64_t)(uintptr_t)(s->get ? src + GUARD : dst + GUARD);
    pid_t pid = s->pid ? s->pid : getpid();
    s->took = s->owner ? fy_xfer_split_copy_own(&ctl, s->gen, s->chunk, s->want,
                                                pid, local, remote, s->get)
                       : fy_xfer_split_copy(&ctl, s->gen, s->chunk, s->want,
                                            pid, local, remote, s->get);
    return NULL;
}

static uint64_t claim_front(void)
{
    return atomic_load(&ctl.claim) & 0xffffu;
}
static uint64_t claim_back(void)
{
    return (atomic_load(&ctl.claim) >> 16) & 0xffffu;
}

static void alone(bool owner_first)
{
    const size_t len = 5 * 65536 + 123; /* 6 chunks of 64 KiB */
    const uint64_t chunk = 65536, n = 6;
    for (int get = 0; get < 2; get++) {
        unsigned seed = (unsigned)(owner_first * 2 + get + 1);
        prepare(len, seed);
        uint32_t gen = fy_xfer_split_open(&ctl, &gen_counter);
        struct side o = {get, true, gen, chunk, len, 0, 0};
        struct side h = {get, false, gen, chunk, len, 0, 0};
        run_side(owner_first ? &o : &h);
        run_side(owner_first ? &h : &o);
        ssize_t rc = fy_xfer_split_wait(&ctl, chunk, len);
        const char *what = get ? "get" : "put";
        TAP_EQ_INT(rc, (long long)len, "%s, %s alone: the transfer's length",
                   what, owner_first ? "owner" : "helper");
        TAP_EQ_INT(verify(len, seed), -1,
                   "%s, %s alone: every byte once, guards intact", what,
                   owner_first ? "owner" : "helper");
        TAP_EQ_INT(owner_first ? o.took : h.took, (long long)n,
                   "%s: the first claimer took all %llu chunks", what,
                   (unsigned long long)n);
        TAP_EQ_INT(owner_first ? h.took : o.took, 0,
                   "%s: the second found none", what);
        TAP_EQ_INT(owner_first ? claim_front() : claim_back(), (long long)n,
                   "%s: taken from the %s", what,
                   owner_first ? "front" : "back");
        TAP_EQ_INT(owner_first ? claim_back() : claim_front(), 0,
                   "%s: nothing from the other end", what);
    }
}

static void together(void)
{
    static const size_t lens[] = {32768,  65536 + 1,      3 * 65536, 200000,
                                  524288, 1048576 + 4097, MAXLEN};
    int bad = 0, sum_bad = 0, len_bad = 0;
    for (int round = 0; round < 200; round++) {
        size_t len = lens[round % FY_ARRAY_LEN(lens)];
        uint64_t chunk = fy_xfer_split_chunk(len);
        uint64_t n = (len + chunk - 1) / chunk;
        bool get = round % 2;
        unsigned seed = (unsigned)round + 100;
        prepare(len, seed);
        uint32_t gen = fy_xfer_split_open(&ctl, &gen_counter);
        struct side o = {get, true, gen, chunk, len, 0, 0};
        struct side h = {get, false, gen, chunk, len, 0, 0};
        pthread_t t;
        if (pthread_create(&t, NULL, run_side, &h)) {
            tap_skip("cannot start a thread");
            return;
        }
        run_side(&o);
        ssize_t rc = fy_xfer_split_wait(&ctl, chunk, len);
        pthread_join(t, NULL);
        if (rc != (ssize_t)len)
            len_bad++;
        if (verify(len, seed) != -1)
            bad++;
        if ((uint64_t)(o.took + h.took) != n ||
            claim_front() + claim_back() != n)
            sum_bad++;
    }
    TAP_EQ_INT(len_bad, 0, "owner and helper at once: every transfer whole");
    TAP_EQ_INT(bad, 0, "owner and helper at once: every byte right");
    TAP_EQ_INT(sum_bad, 0,
               "owner and helper at once: the two ends meet, no chunk twice");
}

static void stale_and_malformed(void)
{
    const size_t len = 4 * 65536;
    prepare(len, 9);
    uint32_t old = fy_xfer_split_open(&ctl, &gen_counter); /* abandoned */
    uint32_t gen = fy_xfer_split_open(&ctl, &gen_counter);
    struct side stale = {true, false, old, 65536, len, 0, 0};
    run_side(&stale);
    TAP_EQ_INT(stale.took, 0, "a helper of an older generation takes nothing");
    TAP_EQ_INT(claim_front() + claim_back(), 0, "and claims nothing");
    /* 4 KiB chunks of 512 MiB: 131072 chunks, past the 16-bit counts.
     * Its process does not exist (pid -1): had it claimed chunks, their
     * copies would fail without touching memory, and it would count them. */
    struct side big = {true, false, gen, 4096, (uint64_t)512 << 20, 0, -1};
    run_side(&big);
    TAP_EQ_INT(big.took, 0, "a helper asked for 2^17 chunks does not help");
    TAP_EQ_INT(claim_front() + claim_back(), 0, "and claims nothing");
    struct side o = {true, true, gen, 65536, len, 0, 0};
    run_side(&o);
    TAP_EQ_INT(fy_xfer_split_wait(&ctl, 65536, len), (long long)len,
               "the owner then does the transfer alone");
    TAP_EQ_INT(verify(len, 9), -1, "every byte right");
}

int main(void)
{
    src = malloc(MAXLEN + 2 * GUARD);
    dst = malloc(MAXLEN + 2 * GUARD);
    if (!src || !dst)
        tap_skip_all("out of memory");
    /* Our own memory through process_vm_readv: forbidden where cma is. */
    unsigned char a = 1, b = 0;
    if (fy_xfer_cma_ops.copy_remote(getpid(), &b, (uint64_t)(uintptr_t)&a, 1,
                                    true) != 1)
        tap_skip_all("process_vm_readv is not allowed here");
    alone(true);
    alone(false);
    together();
    stale_and_malformed();
    free(src);
    free(dst);
    return tap_done();
}
