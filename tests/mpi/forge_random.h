/* SPDX-License-Identifier: MIT */
/* Streams of random, well-framed packets for the network channels' forge
 * helpers (tcp_forge.c, ofi_forge.c, mode random<seed>): the packets a
 * peer could send, framed as the channel frames them (right magic and
 * sequence) but with random types, tags, contexts, control fields and
 * payloads, and pushed messages as the library sends them with a field
 * gone wrong now and then. Each helper supplies the function that puts
 * one packet on its wire; the receiver must end the job with a
 * "malformed" (or "out of memory") error, never crash or hang. */
#ifndef FY_FORGE_RANDOM_H
#define FY_FORGE_RANDOM_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* One packet, whatever the wire: the fields every channel carries. */
struct forge_pkt {
    uint8_t type;
    int32_t tag;
    uint32_t ctx;
    uint64_t seq, len;
    uint64_t ctl[4];
};

/* Longest payload: past the TCP channel's steering into receive buffers
 * (32 KiB), within every channel's largest packet. */
enum { FORGE_MAXLEN = 96 << 10 };
static uint8_t forge_payload[FORGE_MAXLEN];

/* Put packet p (its payload: p->len bytes at 'payload') on the wire;
 * false once the receiver has ended the job. */
typedef bool forge_put_fn(void *arg, const struct forge_pkt *p,
                          const uint8_t *payload);

static inline uint64_t forge_rnd(uint64_t *s)
{
    uint64_t x = *s; /* xorshift64* */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* A control field: boundary values, lengths, addresses of our buffer. */
static inline uint64_t forge_field(uint64_t *s, const void *buf, size_t n)
{
    switch (forge_rnd(s) % 8) {
    case 0:
        return 0;
    case 1:
        return forge_rnd(s) % 300;
    case 2:
        return (uint64_t)1 << (forge_rnd(s) % 64);
    case 3:
        return UINT64_MAX - forge_rnd(s) % 4;
    case 4:
        return (uint64_t)(uintptr_t)buf + forge_rnd(s) % n;
    case 5:
        return (1 + forge_rnd(s) % 2) << 32 | forge_rnd(s) % 8; /* cookie */
    case 6:
        return 4096 + forge_rnd(s) % 3 - 1;
    default:
        return forge_rnd(s);
    }
}

static inline bool forge_put_random(forge_put_fn *put, void *arg,
                                    const struct forge_pkt *p, uint64_t *s)
{
    for (uint64_t b = 0; b < p->len; b++)
        forge_payload[b] = (uint8_t)forge_rnd(s);
    return put(arg, p, forge_payload);
}

/* About 24 packets in sequence from 'seq', then one of an unknown type.
 * Half are pushed messages as the library frames them (a PUSH, then
 * pieces of up to FORGE_MAXLEN, with one field of the PUSH in 32
 * random); the rest eager, synchronous and rendezvous messages or any
 * type, with random fields. Tags avoid 1, which the receiver's receive
 * waits for. */
static inline void forge_random(forge_put_fn *put, void *arg, uint64_t seed,
                                uint64_t seq)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    const void *buf = forge_payload;
    const size_t bufn = sizeof(forge_payload);
    for (int i = 0; i < 24; i++) {
        struct forge_pkt h = {.seq = seq++};
        h.tag = forge_rnd(&s) % 2 ? (int32_t)(2 + forge_rnd(&s) % 8)
                                  : (int32_t)forge_rnd(&s);
        if (h.tag == 1)
            h.tag = 7;
        h.ctx = forge_rnd(&s) % 8 ? 0 : (uint32_t)(forge_rnd(&s) & 0xfff);
        if (forge_rnd(&s) % 2) {
            /* A push: total, our buffer, a cookie, the bytes pushed. */
            uint64_t total = forge_rnd(&s) % (4 * FORGE_MAXLEN);
            uint64_t pushed = forge_rnd(&s) % 2 ? total : total / 2;
            uint64_t cookie = 1 + forge_rnd(&s) % 64;
            uint64_t first = forge_rnd(&s) % 4097;
            first = first < pushed ? first : pushed;
#define MAYBE(v) (forge_rnd(&s) % 32 ? (v) : forge_field(&s, buf, bufn))
            h.type = 8;
            h.ctl[0] = MAYBE(total);
            h.ctl[1] = MAYBE((uint64_t)(uintptr_t)buf);
            h.ctl[2] = MAYBE(cookie);
            h.ctl[3] = MAYBE(pushed);
            h.len = first;
#undef MAYBE
            if (!forge_put_random(put, arg, &h, &s))
                return;
            for (uint64_t off = first; off < pushed && i < 24; i++) {
                uint64_t piece = 1 + forge_rnd(&s) % FORGE_MAXLEN;
                piece = piece < pushed - off ? piece : pushed - off;
                struct forge_pkt d = {.type = 9,
                                      .tag = h.tag,
                                      .ctx = h.ctx,
                                      .seq = seq++,
                                      .len = piece,
                                      .ctl = {total, pushed, cookie, off}};
                if (!forge_put_random(put, arg, &d, &s))
                    return;
                off += piece;
            }
            continue;
        }
        static const uint8_t msg[] = {1, 2, 3};
        h.type = forge_rnd(&s) % 2 ? msg[forge_rnd(&s) % sizeof(msg)]
                                   : (uint8_t)(1 + forge_rnd(&s) % 15);
        for (int k = 0; k < 4; k++)
            h.ctl[k] = forge_field(&s, buf, bufn);
        /* Payloads only where the type has one (else the header is
         * refused at once, which the other modes cover); an OFFER's
         * payload on the libfabric channel is its key. */
        bool payload = h.type == 1 || h.type == 2 || h.type == 5 ||
                       h.type == 8 || h.type == 9;
        h.len = !payload ? 0 : forge_rnd(&s) % (FORGE_MAXLEN + 1);
        if (h.type == 10 && forge_rnd(&s) % 2)
            h.len = 8;
        if (!forge_put_random(put, arg, &h, &s))
            return;
    }
    struct forge_pkt end = {.type = 0, .seq = seq};
    put(arg, &end, forge_payload); /* unknown: the stream ends malformed */
}

#endif
