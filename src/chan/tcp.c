/* SPDX-License-Identifier: MIT */
/* The TCP channel: packets to ranks on other nodes over TCP connections,
 * one per pair, non-blocking sockets under one epoll set. The lower rank
 * of a pair opens the connection (at its first packet to the other, or
 * when asked) and both send on it, so TCP's acknowledgements ride on the
 * replies: with one connection per direction every message cost its
 * receiver a separate acknowledgement segment through the whole TCP
 * stack (about a third of a loopback round trip here). The higher rank,
 * at its first packet, asks: it opens a connection whose hello says
 * "connect to me" (TCP_HELLO_ASK) and keeps its packets queued until the
 * lower rank's connection arrives; the asking connection carries nothing
 * else and the lower rank closes it. Listener addresses travel through the
 * bootstrap's key-value exchange ("fy-tcp" = "ip port key").
 *
 * Wire: a hello (who connects, the receiver's key, the job) once per
 * stream, then packets: a 64-byte header (struct tcp_hdr, host byte
 * order: every node of a job runs the same build) and 'len' payload bytes.
 * The header carries the pair sequence number; the stream keeps the
 * order, and the receiver checks that each packet is the one due, so a
 * peer that skips or repeats one is reported, not obeyed.
 *
 * Invariants of one process (all private memory):
 * - peers[p].out is the connection we opened to p, peers[p].in the one p
 *   opened to us, adopted only after its hello checked out (our key, our
 *   job, a rank of another node with no connection to us yet). Both are
 *   read; each direction uses one of them for good: peers[p].tx is the one
 *   we send on, peers[p].rx the one p's packets came on first - packets
 *   from p on the other are an error. For me < p, tx is out (opened at our
 *   first packet or at p's ask); for me > p, tx is in, and is -1 until p
 *   connects: our packets wait in obuf meanwhile, flushed when in is
 *   adopted. out, for me > p, is only the asking connection.
 * - obuf[ohead, olen) are bytes accepted by try_send and not yet written,
 *   in order; a packet is accepted whole or not at all, and only while
 *   fewer than FERRY_TCP_QUEUE bytes wait (back-pressure).
 * - ibuf[0, ilen) are bytes read and not yet handed up; a header is
 *   checked (magic, type, length against the type and the channel's
 *   limit, sequence) before its length steers anything, and the buffer
 *   grows only to a checked packet's size.
 * - After a peer's BYE nothing more may come from it; end of stream
 *   before BYE means the peer died.
 *
 * Waiting: a rank with ranks on other nodes sleeps in epoll_wait on its
 * sockets and on a pipe of its own. Ranks of its node that would ring its
 * futex doorbell see FY_SLEEP_NET in 'sleeping' and write a byte to that pipe
 * instead, which they open once through /proc/<pid>/fd (the permission
 * windows need too); where that is refused they mark the sleeper's
 * 'nopoke' and it bounds each sleep by 1 ms. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "boot/boot.h"
#include "chan/chan.h"
#include "shm/shm.h"
#include "util/copy.h"
#include "util/mt.h"

#define TCP_MAGIC 0x70547946u /* "FyTp" */
#define TCP_HELLO_MAGIC 0x6f6c6c6548794646ull
#define TCP_HELLO_ASK 0x6b73416548794646ull /* "connect to me" */
#define TCP_BYE 0x80u                       /* channel-internal packet type */
/* DATA payload per packet: 1 MiB moved 1-4 MiB messages 1.2-1.3x faster
 * than 256 KiB between two virtual nodes (bench/README.md). */
#define TCP_CHUNK ((uint64_t)1024 << 10)
#define TCP_IBUF_MIN ((size_t)256 << 10)
#define TCP_PENDING_MAX 64
#define TCP_SMALL 1024 /* packets up to this size are sent from one buffer */
/* DATA payloads from this size are read straight into their receive
 * buffer (one copy less) when the layer above names it. */
#define TCP_STEER_MIN ((uint64_t)32 << 10)
#define TCP_KEY "fy-tcp"

struct tcp_hdr {
    uint32_t magic;
    uint8_t type; /* enum fy_pkt_type or TCP_BYE */
    uint8_t pad[3];
    int32_t tag;
    uint32_t ctx;
    uint64_t seq; /* the pair sequence number */
    uint64_t len; /* payload bytes that follow */
    struct fy_ctl ctl;
};
static_assert(sizeof(struct tcp_hdr) == 64, "the header is 64 bytes");

struct tcp_hello {
    uint64_t magic;
    uint32_t src, dst;
    uint64_t key; /* the receiver's, from the key-value exchange */
    char jobid[64];
};

struct tcp_peer {
    int out, in; /* -1: none */
    int tx, rx;  /* the connection each direction uses, -1: none yet */
    bool out_watch;
    bool asked; /* me > peer: we asked the peer to connect (once) */
    bool bye_in, bye_out;
    uint8_t *obuf;
    size_t ohead, olen, ocap;
    uint8_t *ibuf;
    size_t ilen, icap;
    /* A DATA payload being read straight into its receive buffer. */
    uint8_t *dest;       /* NULL: none */
    uint64_t dest_got;   /* bytes of it there */
    struct tcp_hdr dhdr; /* its (checked) header */
};

struct tcp_pending {
    int fd;
    uint32_t got;
    struct tcp_hello hello;
};

/* Direct polling: a busy-polling rank reads the sockets of the TCP_HOT
 * peers that sent to it last with a non-blocking recv at every pass, so a
 * packet from them costs one system call to notice and read, not an
 * epoll_wait and then a recv (1-1.5 us of a 5-8 us loopback one-way here).
 * epoll_wait still runs at every TCP_EPOLL_EVERY-th pass, and at every
 * pass while no peer is hot: new connections, output waiting for room,
 * the wake pipe and every other peer. */
#define TCP_HOT 2
#define TCP_EPOLL_EVERY 8

/* Corking (tcp_cork): while a caller of fy_chan_cork holds the cork,
 * packets of up to TCP_CORK_MAX payload bytes wait in obuf and go out
 * together when it is taken off - one system call for a burst of small
 * packets (each send over loopback costs about 5 us here, the receiver's
 * side of TCP included), such as the answers to a batch of one-sided
 * requests. Larger ones go as always, behind what waits. */
#define TCP_CORK_MAX ((uint64_t)16 << 10)
#define TCP_CORK_PEERS 8

/* epoll data: what an event is about (EV_SOCK: peer * 2, + 1 for the
 * connection we opened). */
enum { EV_LISTEN, EV_PENDING, EV_SOCK, EV_WAKE };
#define EV(kind, i) ((uint64_t)(kind) << 32 | (uint32_t)(i))

static struct {
    int ep, lfd;
    int wake_rd, wake_wr;
    uint64_t key;
    uint64_t max_payload;
    size_t queue_max;
    int P, me;
    int nremote, byes_in;
    struct tcp_peer *peers;
    struct tcp_pending pend[TCP_PENDING_MAX];
    int npend;
    int *pokefd; /* [local rank]: its wake pipe, -1 not open, -2 refused */
    /* Direct polling (tcp_poll): the peers that sent to us last, most
     * recent first. */
    int hot[TCP_HOT];
    int nhot;
    unsigned pass;
    /* Corking: depth; peers with packets waiting for the cork to come
     * off (ncorked of them, or more: cork_all). */
    int cork;
    int corked[TCP_CORK_PEERS];
    int ncorked;
    bool cork_all;
} tcp = {.ep = -1, .lfd = -1, .wake_rd = -1, .wake_wr = -1};

struct fy_chan_counts fy_chan_tcp_counts;

static _Noreturn void tcp_bad(int src, const char *what)
{
    fy_fatal(1, "malformed TCP packet header from rank %d (%s)", src, what);
}

static _Noreturn void tcp_fail(int peer, const char *what, int err)
{
    FY_DEBUG("%s rank %d: %s", what, peer, strerror(err));
    if (err == EPIPE || err == ECONNRESET)
        fy_chan_peer_gone(peer);
    fy_fatal(1, "TCP channel: %s rank %d failed: %s", what, peer,
             strerror(err));
}

static void ep_ctl(int op, int fd, uint32_t events, uint64_t data)
{
    struct epoll_event e = {.events = events, .data.u64 = data};
    if (epoll_ctl(tcp.ep, op, fd, &e) != 0 && op != EPOLL_CTL_DEL)
        fy_fatal(1, "TCP channel: epoll_ctl failed: %m");
}

/* ---- connections -------------------------------------------------------- */

/* FERRY_TCP_CC on a new connection. BBR paces a connection at the
 * delivery rate it estimates from the acknowledgements; on the pair's one
 * connection these ride on replies whose timing the application sets, the
 * estimate falls, and the pacing then holds a bulk stream at 0.6-0.8 of
 * what cubic or reno move (loopback, bench/README.md "Between nodes"). */
static void set_congestion(int fd)
{
    const char *want = fy_env_str(FY_ENV_TCP_CC);
    if (!strcmp(want, "system"))
        return;
    if (strcmp(want, "auto")) {
        if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, want, strlen(want))) {
            static bool warned;
            if (!warned)
                FY_WARN("FERRY_TCP_CC=%s: refused by the kernel (%m); the "
                        "system's congestion control stays",
                        want);
            warned = true;
        }
        return;
    }
    char cur[16] = "";
    socklen_t l = sizeof(cur);
    if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cur, &l) ||
        strcmp(cur, "bbr"))
        return;
    /* cubic needs privilege unless the system allows it; reno never does. */
    if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "cubic", 5))
        (void)setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "reno", 4);
}

static void set_nodelay(int fd)
{
    /* Headers and the tail of a message must not wait for an ACK. */
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    set_congestion(fd);
}

/* Our address as the other nodes reach it: loopback when every node is
 * on this machine (FERRY_NODES), else this host name's first IPv4
 * address. */
static void my_address(struct in_addr *a)
{
    a->s_addr = htonl(INADDR_LOOPBACK);
    if (fy_boot.virtual_nodes)
        return;
    char host[256];
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    if (gethostname(host, sizeof(host)) == 0 &&
        getaddrinfo(host, NULL, &hints, &res) == 0 && res) {
        *a = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
    }
    if (res)
        freeaddrinfo(res);
}

/* Connect to 'peer' (blocking: once per peer, to a listener that exists
 * since the start-up fence) and send our hello: the pair's connection, or
 * (ask) the request that peer open it. */
static void tcp_connect(int peer, bool ask)
{
    char val[FY_BOOT_VALUE_MAX], ip[64];
    unsigned port;
    unsigned long long key;
    int rc = fy_boot.ops->kvs_get(peer, TCP_KEY, val, sizeof(val));
    if (rc || sscanf(val, "%63[0-9.]:%u:%llu", ip, &port, &key) != 3 ||
        port > 65535)
        fy_fatal(1, "TCP channel: rank %d published no usable address (%s)",
                 peer, rc ? strerror(-rc) : val);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, ip, &a.sin_addr) != 1)
        fy_fatal(1, "TCP channel: rank %d published address '%s'", peer, ip);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        fy_fatal(1, "TCP channel: socket: %m");
    while (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        if (errno != EINTR)
            fy_fatal(1, "TCP channel: cannot connect to rank %d at %s:%u: %m",
                     peer, ip, port);
    }
    set_nodelay(fd);
    struct tcp_hello h = {.magic = ask ? TCP_HELLO_ASK : TCP_HELLO_MAGIC,
                          .src = (uint32_t)tcp.me,
                          .dst = (uint32_t)peer,
                          .key = key};
    snprintf(h.jobid, sizeof(h.jobid), "%s", fy_boot.jobid);
    for (size_t off = 0; off < sizeof(h);) {
        ssize_t n = send(fd, (char *)&h + off, sizeof(h) - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            tcp_fail(peer, "saying hello to", n < 0 ? errno : EPIPE);
        off += (size_t)n;
    }
    if (fcntl(fd, F_SETFL, O_NONBLOCK) != 0)
        fy_fatal(1, "TCP channel: fcntl: %m");
    tcp.peers[peer].out = fd;
    ep_ctl(EPOLL_CTL_ADD, fd, EPOLLIN, EV(EV_SOCK, peer * 2 + 1));
}

static size_t flush_peer(int peer);

static void pending_drop(int i)
{
    epoll_ctl(tcp.ep, EPOLL_CTL_DEL, tcp.pend[i].fd, NULL);
    close(tcp.pend[i].fd);
    tcp.pend[i] = tcp.pend[--tcp.npend];
}

static int accept_all(void)
{
    int n = 0;
    for (;;) {
        int fd = accept4(tcp.lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return n;
        }
        if (tcp.npend == TCP_PENDING_MAX) {
            FY_WARN("too many unidentified TCP connections; dropping one");
            close(fd);
            continue;
        }
        set_nodelay(fd);
        tcp.pend[tcp.npend] = (struct tcp_pending){.fd = fd};
        ep_ctl(EPOLL_CTL_ADD, fd, EPOLLIN, EV(EV_PENDING, fd));
        tcp.npend++;
        n++;
    }
}

/* Read the hello of pending connection 'fd'; adopt it once it checks out:
 * only then is anything read from it taken as packets. */
static void pending_read(int fd)
{
    int i;
    for (i = 0; i < tcp.npend && tcp.pend[i].fd != fd; i++)
        ;
    if (i == tcp.npend)
        return;
    struct tcp_pending *q = &tcp.pend[i];
    ssize_t k = recv(fd, (char *)&q->hello + q->got, sizeof(q->hello) - q->got,
                     MSG_DONTWAIT);
    if (k < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (k <= 0) {
        pending_drop(i);
        return;
    }
    q->got += (uint32_t)k;
    if (q->got < sizeof(q->hello))
        return;
    struct tcp_hello h = q->hello;
    h.jobid[sizeof(h.jobid) - 1] = '\0';
    int src = (int)h.src;
    bool ask = h.magic == TCP_HELLO_ASK;
    /* The pair's connection comes from its lower rank, an ask from the
     * higher one. */
    if ((h.magic != TCP_HELLO_MAGIC && !ask) || h.dst != (uint32_t)tcp.me ||
        h.key != tcp.key || strcmp(h.jobid, fy_boot.jobid) ||
        h.src >= (uint32_t)tcp.P || !fy_chan_remote(src) ||
        (ask ? src < tcp.me : src > tcp.me || tcp.peers[src].in >= 0)) {
        FY_WARN("rejected a TCP connection that is not from a rank of this "
                "job on another node");
        pending_drop(i);
        return;
    }
    struct tcp_peer *tp = &tcp.peers[src];
    if (ask) {
        /* It carries nothing more: open the pair's connection, if we have
         * not already. An ask read late - after we opened the connection
         * for our own packets, and the pair said goodbye and closed it -
         * is stale: src may be gone, listener and all. */
        pending_drop(i);
        if (tp->out < 0 && !tp->bye_in && !tp->bye_out)
            tcp_connect(src, false);
        return;
    }
    tcp.pend[i] = tcp.pend[--tcp.npend];
    tp->in = fd;
    ep_ctl(EPOLL_CTL_MOD, fd, EPOLLIN, EV(EV_SOCK, src * 2));
    if (tp->tx < 0) {
        /* What we queued while we waited for it goes now. */
        tp->tx = fd;
        flush_peer(src);
    }
}

/* ---- sending ------------------------------------------------------------ */

/* Write what waits for 'peer'. Returns bytes written. */
static size_t flush_peer(int peer)
{
    struct tcp_peer *tp = &tcp.peers[peer];
    size_t done = 0;
    if (tp->tx < 0)
        return 0; /* the pair's connection is not there yet */
    while (tp->ohead < tp->olen) {
        ssize_t n = send(tp->tx, tp->obuf + tp->ohead, tp->olen - tp->ohead,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                break;
            tcp_fail(peer, "sending to", errno);
        }
        tp->ohead += (size_t)n;
        done += (size_t)n;
    }
    uint64_t data = EV(EV_SOCK, peer * 2 + (tp->tx == tp->out));
    if (tp->ohead == tp->olen) {
        tp->ohead = tp->olen = 0;
        if (tp->out_watch) {
            ep_ctl(EPOLL_CTL_MOD, tp->tx, EPOLLIN, data);
            tp->out_watch = false;
        }
    } else if (!tp->out_watch) {
        ep_ctl(EPOLL_CTL_MOD, tp->tx, EPOLLIN | EPOLLOUT, data);
        tp->out_watch = true;
    }
    return done;
}

/* Keep bytes [off, len) of the iovecs for later, behind what waits. */
static void queue_rest(struct tcp_peer *tp, const struct iovec *iov, int n,
                       size_t off)
{
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += iov[i].iov_len;
    size_t need = tp->olen + total - off;
    if (tp->ohead && need > tp->ocap) {
        memmove(tp->obuf, tp->obuf + tp->ohead, tp->olen - tp->ohead);
        tp->olen -= tp->ohead;
        tp->ohead = 0;
        need = tp->olen + total - off;
    }
    if (need > tp->ocap) {
        size_t cap = FY_MAX(need, 2 * tp->ocap);
        uint8_t *b = realloc(tp->obuf, cap);
        if (!b)
            fy_fatal(1, "out of memory queueing %zu bytes for TCP", need);
        tp->obuf = b;
        tp->ocap = cap;
    }
    for (int i = 0; i < n; i++) {
        size_t l = iov[i].iov_len;
        if (off >= l) {
            off -= l;
            continue;
        }
        fy_copy(tp->obuf + tp->olen, (uint8_t *)iov[i].iov_base + off, l - off);
        tp->olen += l - off;
        off = 0;
    }
}

/* Whether a DATA packet would be taken now (nothing queued). */
static bool tcp_writable(int peer)
{
    const struct tcp_peer *tp = &tcp.peers[peer];
    return tp->olen == tp->ohead;
}

/* Send one packet of any type, or refuse it (queue full). */
static bool send_pkt(int peer, uint32_t type, int32_t tag, uint32_t ctx,
                     const struct fy_ctl *ctl, const void *data, uint64_t len)
{
    struct tcp_peer *tp = &tcp.peers[peer];
    if (tp->tx < 0) {
        /* The pair's one connection: ours if we are its lower rank, else
         * the peer's, which we ask for once and wait for (packets queue). */
        if (tcp.me < peer) {
            if (tp->out < 0)
                tcp_connect(peer, false);
            tp->tx = tp->out;
        } else if (tp->in >= 0) {
            tp->tx = tp->in;
        } else if (!tp->asked) {
            tcp_connect(peer, true);
            tp->asked = true;
        }
    }
    bool corked = tcp.cork && len <= TCP_CORK_MAX;
    if (tp->olen != tp->ohead) {
        if (!corked)
            flush_peer(peer);
        /* Rendezvous data waits in the sender's buffer rather than in a
         * copy of ours: only the rest of a partly written chunk is. */
        if (tp->olen - tp->ohead >= (type == FY_PKT_DATA ? 1 : tcp.queue_max))
            return false;
    }
    struct fy_chan_peer *pe = &fy_chan.peers[peer];
    struct tcp_hdr h = {.magic = TCP_MAGIC,
                        .type = (uint8_t)type,
                        .tag = tag,
                        .ctx = ctx,
                        .seq = pe->sseq + 1,
                        .len = len};
    if (ctl)
        h.ctl = *ctl;
    else
        h.ctl.total = len;
    /* A small packet is one buffer: a single-segment send is cheaper. */
    uint8_t one[TCP_SMALL];
    struct iovec iov[2] = {{&h, sizeof(h)}, {(void *)data, (size_t)len}};
    int n = len ? 2 : 1;
    if (len && len <= sizeof(one) - sizeof(h)) {
        memcpy(one, &h, sizeof(h));
        fy_copy(one + sizeof(h), data, (size_t)len);
        iov[0] = (struct iovec){one, sizeof(h) + (size_t)len};
        n = 1;
    }
    size_t off = 0;
    if (corked) {
        if (tp->olen == tp->ohead && !tcp.cork_all) {
            if (tcp.ncorked < TCP_CORK_PEERS)
                tcp.corked[tcp.ncorked++] = peer;
            else
                tcp.cork_all = true;
        }
    } else if (tp->olen == tp->ohead && tp->tx >= 0) {
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        for (;;) {
            ssize_t k = sendmsg(tp->tx, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (k >= 0) {
                off = (size_t)k;
                break;
            }
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN)
                tcp_fail(peer, "sending to", errno);
            break;
        }
    }
    if (off < sizeof(h) + len) {
        queue_rest(tp, iov, n, off);
        if (!corked)
            flush_peer(peer); /* registers for EPOLLOUT */
    }
    pe->sseq++;
    return true;
}

/* Put the cork on (on) or take it off: nested, the outermost off writes
 * what waits. */
static void tcp_cork(bool on)
{
    if (on) {
        tcp.cork++;
        return;
    }
    if (--tcp.cork)
        return;
    if (tcp.cork_all) {
        for (int p = 0; p < tcp.P; p++)
            if (tcp.peers[p].olen != tcp.peers[p].ohead)
                flush_peer(p);
    } else {
        for (int i = 0; i < tcp.ncorked; i++)
            flush_peer(tcp.corked[i]);
    }
    tcp.ncorked = 0;
    tcp.cork_all = false;
}

static bool tcp_try_send(int peer, uint32_t type, int32_t tag, uint32_t ctx,
                         const struct fy_ctl *ctl, const void *data,
                         uint64_t len)
{
    return send_pkt(peer, type, tag, ctx, ctl,
                    fy_pkt_has_payload(type) ? data : NULL,
                    fy_pkt_has_payload(type) ? len : 0);
}

/* ---- receiving ---------------------------------------------------------- */

/* Check a header from 'src' before anything trusts it. */
static void check_hdr(int src, const struct tcp_hdr *h)
{
    struct tcp_peer *tp = &tcp.peers[src];
    if (h->magic != TCP_MAGIC)
        tcp_bad(src, "bad magic");
    if (tp->bye_in)
        tcp_bad(src, "packet after goodbye");
    if (h->type == TCP_BYE) {
        if (h->len)
            tcp_bad(src, "goodbye with a payload");
    } else if (h->type < FY_PKT_EAGER || h->type >= FY_PKT_MAX) {
        tcp_bad(src, "unknown packet type");
    } else if (!fy_pkt_has_payload(h->type) ? h->len != 0
                                            : h->len > tcp.max_payload) {
        tcp_bad(src, "payload length");
    }
    if (h->ctx >= (1u << 12))
        tcp_bad(src, "context");
    if (h->seq != fy_chan.peers[src].rseq)
        tcp_bad(src, "sequence");
}

static void deliver(int src, const struct tcp_hdr *h, const uint8_t *data)
{
    struct fy_pkt p = {.src = src,
                       .type = h->type,
                       .tag = h->tag,
                       .ctx = h->ctx,
                       .data = data,
                       .len = h->len,
                       .ctl = h->ctl,
                       .lane = FY_LANE_NET};
    fy_chan_count(&fy_chan_tcp_counts, &p);
    fy_chan.deliver(&p);
}

/* A large DATA or PUSH_DATA packet whose payload is not all here: read
 * the rest straight into its receive buffer if the layer above names it.
 * The header at ibuf[at] is checked. Returns true if taken. */
static bool steer(int src, size_t at)
{
    struct tcp_peer *tp = &tcp.peers[src];
    struct tcp_hdr h;
    memcpy(&h, tp->ibuf + at, sizeof(h));
    if ((h.type != FY_PKT_DATA && h.type != FY_PKT_PUSH_DATA) ||
        h.len < TCP_STEER_MIN || !fy_chan.steer)
        return false;
    struct fy_pkt q = {.src = src, .type = h.type, .len = h.len, .ctl = h.ctl};
    uint8_t *dest = fy_chan.steer(&q);
    if (!dest)
        return false;
    size_t have = tp->ilen - at - sizeof(h); /* < h.len */
    fy_copy(dest, tp->ibuf + at + sizeof(h), have);
    tp->dest = dest;
    tp->dest_got = have;
    tp->dhdr = h;
    tp->ilen = at; /* the packet's bytes now belong to 'dest' */
    fy_chan.peers[src].rseq++;
    return true;
}

/* Read more of the steered payload; hand the packet up once complete. */
static int read_steered(int src)
{
    struct tcp_peer *tp = &tcp.peers[src];
    while (tp->dest_got < tp->dhdr.len) {
        ssize_t k = recv(tp->rx, tp->dest + tp->dest_got,
                         (size_t)(tp->dhdr.len - tp->dest_got), MSG_DONTWAIT);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                return 0;
            tcp_fail(src, "receiving from", errno);
        }
        if (k == 0)
            fy_chan_peer_gone(src);
        tp->dest_got += (uint64_t)k;
    }
    uint8_t *dest = tp->dest;
    tp->dest = NULL;
    deliver(src, &tp->dhdr, dest);
    return 1;
}

/* Hand up every whole packet in src's buffer. */
static int parse_in(int src)
{
    struct tcp_peer *tp = &tcp.peers[src];
    size_t at = 0;
    int n = 0;
    while (tp->ilen - at >= sizeof(struct tcp_hdr)) {
        struct tcp_hdr h;
        memcpy(&h, tp->ibuf + at, sizeof(h));
        check_hdr(src, &h);
        size_t need = sizeof(h) + (size_t)h.len;
        if (tp->ilen - at < need) {
            if (steer(src, at))
                break; /* nothing of it stays in ibuf */
            if (need > tp->icap) {
                /* A checked length: grow to hold this packet. */
                memmove(tp->ibuf, tp->ibuf + at, tp->ilen - at);
                tp->ilen -= at;
                at = 0;
                uint8_t *b = realloc(tp->ibuf, need);
                if (!b)
                    fy_fatal(1, "out of memory receiving from rank %d", src);
                tp->ibuf = b;
                tp->icap = need;
            }
            break;
        }
        fy_chan.peers[src].rseq++;
        at += need;
        n++;
        if (h.type == TCP_BYE) {
            tp->bye_in = true;
            tcp.byes_in++;
            continue;
        }
        deliver(src, &h, tp->ibuf + at - h.len);
    }
    if (at) {
        memmove(tp->ibuf, tp->ibuf + at, tp->ilen - at);
        tp->ilen -= at;
        if (tp->icap > TCP_IBUF_MIN && tp->ilen <= TCP_IBUF_MIN) {
            /* A large packet (a pushed piece nobody waited for) grew the
             * buffer: give it back, so a rank does not keep a TCP_CHUNK
             * per peer that once pushed to it. */
            uint8_t *b = realloc(tp->ibuf, TCP_IBUF_MIN);
            if (b) {
                tp->ibuf = b;
                tp->icap = TCP_IBUF_MIN;
            }
        }
    }
    return n;
}

/* End of one of src's connections. On the one its packets come on it is
 * normal once src said goodbye (src then has everything it waits for),
 * else src died; the other one src never wrote ends with it (if src died,
 * the first one tells, or our next send). */
static void sock_closed(int src, int fd)
{
    struct tcp_peer *tp = &tcp.peers[src];
    if (fd == tp->rx && (!tp->bye_in || tp->ilen || tp->dest)) {
        FY_DEBUG("rank %d closed its connection (goodbye %d, %zu bytes left)",
                 src, tp->bye_in, tp->ilen);
        fy_chan_peer_gone(src);
    }
    epoll_ctl(tcp.ep, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
    if (fd == tp->in)
        tp->in = -1;
    if (fd == tp->out)
        tp->out = -1;
    if (fd == tp->rx)
        tp->rx = -1;
    if (fd == tp->tx)
        tp->tx = -1;
}

/* src just sent us something: first among the hot peers. */
static void hot_touch(int src)
{
    int i = 0;
    while (i < tcp.nhot && tcp.hot[i] != src)
        i++;
    if (i == 0 && tcp.nhot)
        return; /* already first */
    if (i == tcp.nhot && tcp.nhot < TCP_HOT)
        tcp.nhot++;
    if (i == TCP_HOT)
        i = TCP_HOT - 1; /* the least recent one leaves */
    memmove(&tcp.hot[1], &tcp.hot[0], (size_t)i * sizeof(tcp.hot[0]));
    tcp.hot[0] = src;
}

/* A connection src sends nothing on: its end of stream closes it, bytes
 * are an error ('what'); a failed read ends the job, or (quiet) only
 * closes it. */
static int read_none(int src, int fd, const char *what, bool quiet)
{
    char c;
    ssize_t k = recv(fd, &c, 1, MSG_DONTWAIT);
    if (k > 0)
        tcp_bad(src, what);
    if (k < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (k < 0 && !quiet)
        tcp_fail(src, "receiving from", errno);
    sock_closed(src, fd);
    return 0;
}

static int read_in(int src, int fd)
{
    struct tcp_peer *tp = &tcp.peers[src];
    if (fd == tp->out && tcp.me > src)
        /* Our ask: the peer only ever closes it (or its process ends). */
        return read_none(src, fd,
                         "packets on the connection that asked for one", true);
    if (tp->rx >= 0 && fd != tp->rx)
        /* Only an end of stream may come here. */
        return read_none(src, fd, "packets on a second connection", false);
    if (!tp->ibuf) {
        /* Only peers that send us something cost a buffer. */
        tp->ibuf = malloc(TCP_IBUF_MIN);
        if (!tp->ibuf)
            fy_fatal(1, "out of memory for rank %d's TCP stream", src);
        tp->icap = TCP_IBUF_MIN;
    }
    int n = 0;
    for (int round = 0; round < 4 && (tp->rx == fd || tp->rx < 0); round++) {
        if (tp->dest) {
            int k = read_steered(src);
            if (!k)
                break;
            n += k;
            continue;
        }
        size_t ask = tp->icap - tp->ilen;
        ssize_t k = recv(fd, tp->ibuf + tp->ilen, ask, MSG_DONTWAIT);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                break;
            tcp_fail(src, "receiving from", errno);
        }
        if (k == 0) {
            sock_closed(src, fd);
            break;
        }
        if (tp->rx < 0)
            tp->rx = fd; /* the connection src sends on, for good */
        hot_touch(src);
        tp->ilen += (size_t)k;
        n += parse_in(src);
        if ((size_t)k < ask)
            break; /* the socket is drained */
    }
    return n;
}

static void drain_wake(void)
{
    char b[64];
    while (read(tcp.wake_rd, b, sizeof(b)) > 0)
        ;
}

static int handle(const struct epoll_event *e)
{
    uint32_t kind = (uint32_t)(e->data.u64 >> 32);
    int i = (int)(uint32_t)e->data.u64;
    switch (kind) {
    case EV_LISTEN:
        return accept_all();
    case EV_PENDING:
        pending_read(i);
        return 1;
    case EV_SOCK: {
        struct tcp_peer *tp = &tcp.peers[i / 2];
        int n = 0;
        if ((e->events & EPOLLOUT) && tp->tx >= 0)
            n += flush_peer(i / 2) ? 1 : 0;
        int fd = i % 2 ? tp->out : tp->in;
        if ((e->events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && fd >= 0)
            n += read_in(i / 2, fd);
        return n;
    }
    case EV_WAKE:
        drain_wake();
        return 0;
    }
    return 0;
}

static int tcp_poll(void)
{
    int n = 0;
    for (int i = 0; i < tcp.nhot; i++) {
        int p = tcp.hot[i];
        if (tcp.peers[p].rx >= 0)
            n += read_in(p, tcp.peers[p].rx);
    }
    if (tcp.nhot && ++tcp.pass % TCP_EPOLL_EVERY)
        return n;
    struct epoll_event ev[32];
    int k = epoll_wait(tcp.ep, ev, 32, 0);
    for (int i = 0; i < k; i++)
        n += handle(&ev[i]);
    return n;
}

static bool tcp_visible(void)
{
    struct epoll_event ev;
    return epoll_wait(tcp.ep, &ev, 1, 0) > 0;
}

/* ---- waiting ------------------------------------------------------------- */

static void tcp_sleep(bool (*more_work)(void))
{
    struct fy_chan_bell *my = &fy_chan.bells[fy_chan.local_me];
    atomic_fetch_add_explicit(&my->sleeping, FY_SLEEP_NET,
                              memory_order_seq_cst);
    /* F2 (as in fy_chan_sleep): pairs with F1 in fy_wake_slow: a rank of
     * this node either sees 'sleeping' and writes our pipe, or its packet
     * is visible to the check below. */
    atomic_thread_fence(memory_order_seq_cst);
    if (!fy_chan_visible() && !(more_work && more_work())) {
        /* Sockets are ready or a byte in the pipe wakes us; the timeout
         * is a safety net, short only where the pipe cannot be used. */
        int ms =
            atomic_load_explicit(&my->nopoke, memory_order_relaxed) ? 1 : 20;
        struct epoll_event ev[8];
        int d = fy_mt_wait_begin(); /* other threads may use MPI meanwhile */
        int k = epoll_wait(tcp.ep, ev, 8, ms);
        fy_mt_wait_end(d);
        for (int i = 0; i < k; i++)
            if ((uint32_t)(ev[i].data.u64 >> 32) == EV_WAKE)
                drain_wake();
    }
    atomic_fetch_sub_explicit(&my->sleeping, FY_SLEEP_NET,
                              memory_order_relaxed);
}

void fy_chan_tcp_poke(int local)
{
    if (tcp.pokefd)
        fy_chan_poke_pipe(tcp.pokefd, local);
}

/* ---- shutdown ------------------------------------------------------------ */

static void tcp_bye(void)
{
    for (int p = 0; p < tcp.P; p++) {
        if (!fy_chan_remote(p) || tcp.peers[p].bye_out)
            continue;
        /* Behind everything queued: the peer reads it last. */
        while (!send_pkt(p, TCP_BYE, 0, 0, NULL, NULL, 0)) {
            tcp_poll();
            struct epoll_event ev;
            epoll_wait(tcp.ep, &ev, 1, 1);
        }
        tcp.peers[p].bye_out = true;
    }
}

static bool tcp_quiet(void)
{
    if (tcp.byes_in < tcp.nremote)
        return false;
    for (int p = 0; p < tcp.P; p++)
        if (tcp.peers[p].olen != tcp.peers[p].ohead)
            return false;
    return true;
}

const struct fy_chan_ops fy_chan_tcp_ops = {
    .name = "tcp",
    .try_send = tcp_try_send,
    .poll = tcp_poll,
    .visible = tcp_visible,
    .writable = tcp_writable,
    .sleep = tcp_sleep,
    .bye = tcp_bye,
    .quiet = tcp_quiet,
    .poke = fy_chan_tcp_poke,
    .cork = tcp_cork,
    .counts = &fy_chan_tcp_counts,
    .chunk = TCP_CHUNK,
    .push_chunk = TCP_CHUNK,
};

/* ---- start-up ------------------------------------------------------------ */

static uint64_t random_key(void)
{
    uint64_t k = 0;
    if (getrandom(&k, sizeof(k), GRND_NONBLOCK) != (ssize_t)sizeof(k)) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        k = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^
            ((uint64_t)getpid() << 16);
    }
    return k | 1;
}

int fy_chan_tcp_init(void)
{
    const char *net = fy_env_str(FY_ENV_NET);
    if (strcmp(net, "auto") && strcmp(net, "tcp")) {
        FY_ERROR("FERRY_NET='%s' must be auto, tcp or ofi", net);
        return -EINVAL;
    }
    long long qmax = fy_env_int(FY_ENV_TCP_QUEUE);
    if (qmax < (64 << 10) || qmax > (1ll << 30)) {
        FY_ERROR("FERRY_TCP_QUEUE=%lld must be 64 KiB to 1 GiB", qmax);
        return -EINVAL;
    }
    if (!fy_boot.ops || !fy_boot.ops->kvs_put || !fy_boot.ops->kvs_get ||
        !fy_boot.ops->fence) {
        FY_ERROR("ranks on other nodes, but the launcher has no key-value "
                 "exchange to find them");
        return -ENOTSUP;
    }
    tcp.P = fy_boot.size;
    tcp.me = fy_boot.rank;
    tcp.queue_max = (size_t)qmax;
    tcp.max_payload = FY_MAX(TCP_CHUNK, fy_chan.cell_payload);
    tcp.nremote = fy_boot.size - fy_boot.local_size;
    tcp.peers = calloc((size_t)tcp.P, sizeof(*tcp.peers));
    tcp.pokefd = malloc((size_t)fy_boot.local_size * sizeof(*tcp.pokefd));
    if (!tcp.peers || !tcp.pokefd)
        return -ENOMEM;
    for (int l = 0; l < fy_boot.local_size; l++)
        tcp.pokefd[l] = -1;
    for (int p = 0; p < tcp.P; p++)
        tcp.peers[p].out = tcp.peers[p].in = tcp.peers[p].tx = tcp.peers[p].rx =
            -1;
    tcp.ep = epoll_create1(EPOLL_CLOEXEC);
    int pfd[2];
    if (tcp.ep < 0 || pipe2(pfd, O_NONBLOCK | O_CLOEXEC) != 0) {
        FY_ERROR("TCP channel: epoll or pipe: %m");
        return -EIO;
    }
    tcp.wake_rd = pfd[0];
    tcp.wake_wr = pfd[1];
    ep_ctl(EPOLL_CTL_ADD, tcp.wake_rd, EPOLLIN, EV(EV_WAKE, 0));
    atomic_store_explicit(&fy_chan.bells[fy_chan.local_me].wake_fd,
                          (uint32_t)tcp.wake_wr + 1, memory_order_relaxed);

    struct sockaddr_in a = {.sin_family = AF_INET};
    my_address(&a.sin_addr);
    socklen_t alen = sizeof(a);
    tcp.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (tcp.lfd < 0 || bind(tcp.lfd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        listen(tcp.lfd, SOMAXCONN) != 0 ||
        getsockname(tcp.lfd, (struct sockaddr *)&a, &alen) != 0) {
        FY_ERROR("TCP channel: cannot listen on %s: %m", inet_ntoa(a.sin_addr));
        return -EIO;
    }
    ep_ctl(EPOLL_CTL_ADD, tcp.lfd, EPOLLIN, EV(EV_LISTEN, 0));
    tcp.key = random_key();
    char val[FY_BOOT_VALUE_MAX];
    /* "ip:port:key": no spaces, '=' or ';', which PMI cannot carry. */
    snprintf(val, sizeof(val), "%s:%u:%llu", inet_ntoa(a.sin_addr),
             (unsigned)ntohs(a.sin_port), (unsigned long long)tcp.key);
    int rc = fy_boot.ops->kvs_put(TCP_KEY, val);
    if (rc || (rc = fy_boot.ops->fence()))
        return rc;
    FY_DEBUG("TCP channel: listening on %s", val);
    return 0;
}

void fy_chan_tcp_finalize(void)
{
    for (int p = 0; tcp.peers && p < tcp.P; p++) {
        struct tcp_peer *tp = &tcp.peers[p];
        if (tp->out >= 0)
            close(tp->out);
        if (tp->in >= 0)
            close(tp->in);
        free(tp->obuf);
        free(tp->ibuf);
    }
    while (tcp.npend)
        pending_drop(tcp.npend - 1);
    for (int l = 0; tcp.pokefd && l < fy_boot.local_size; l++)
        if (tcp.pokefd[l] >= 0)
            close(tcp.pokefd[l]);
    int fds[] = {tcp.lfd, tcp.wake_rd, tcp.wake_wr, tcp.ep};
    for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(tcp.peers);
    free(tcp.pokefd);
    tcp.peers = NULL;
    tcp.pokefd = NULL;
    tcp.lfd = tcp.wake_rd = tcp.wake_wr = tcp.ep = -1;
    tcp.npend = tcp.byes_in = 0;
}
