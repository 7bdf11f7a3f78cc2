/* SPDX-License-Identifier: MIT */
/* The seed's "NIC copy" without a NIC: the kernel's TCP stack on the
 * loopback interface (127.0.0.1). Two-sided and two copies (into the
 * sender's socket buffer, out of the receiver's), each a system call; it
 * is the baseline every shared-memory path must beat, and the path a
 * multi-node job would take. This file owns the whole mechanism: socket
 * plumbing, the connection hello, and the per-pair streams with their
 * connection set-up (fy_xfer_net_open/push/pull), which the library's
 * rendezvous (proto/rndv.c) and the laboratory (bench/lab) both drive, so
 * what the laboratory measures is what runs in production.
 *
 * The streams: each process listens on an ephemeral 127.0.0.1 port and
 * publishes it with a random key. A sender connects to a receiver's
 * listener on its first push to it, says who it is (hello: ranks, the
 * receiver's key, the job id), and from then on writes, message after
 * message, a header (receiver's cookie, length) and exactly that many
 * bytes. The receiver accepts connections only while a pull waits for
 * one, reads exactly one header, then exactly the bytes its caller asks
 * for: the next message stays in the socket. Every socket is non-blocking;
 * partial reads and writes resume on the next call.
 *
 * Invariants of one process' endpoint (all private memory):
 * - peers[p].out is ours to write (we opened it); peers[p].in is the
 *   connection p opened to us, adopted only after its hello proved it.
 * - hdr_sent counts bytes of the current outgoing header; it is 0 between
 *   messages. hdr_got likewise for the incoming header.
 * - Nothing read from a socket steers a copy before the caller checked it:
 *   pull_hdr hands cookie and length up, pull copies at most what the
 *   caller's receive holds. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"
#include "xfer/xfer.h"

static void loopback_addr(struct sockaddr_in *a, uint16_t port)
{
    memset(a, 0, sizeof(*a));
    a->sin_family = AF_INET;
    a->sin_port = htons(port);
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

int fy_xfer_net_listen(int *fd_out, uint16_t *port_out)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    struct sockaddr_in a;
    loopback_addr(&a, 0);
    socklen_t alen = sizeof(a);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        listen(fd, SOMAXCONN) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
        int err = errno;
        close(fd);
        return -err;
    }
    *fd_out = fd;
    *port_out = ntohs(a.sin_port);
    return 0;
}

static void set_nodelay(int fd)
{
    /* Headers and the tail of a message must not wait for an ACK. */
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int fy_xfer_net_connect(uint16_t port, int *fd_out)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    set_nodelay(fd);
    struct sockaddr_in a;
    loopback_addr(&a, port);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 &&
        errno != EINPROGRESS) {
        int err = errno;
        close(fd);
        return -err;
    }
    *fd_out = fd;
    return 0;
}

int fy_xfer_net_accept(int lfd, int *fd_out)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            set_nodelay(fd);
            *fd_out = fd;
            return 0;
        }
        if (errno == EINTR || errno == ECONNABORTED)
            continue;
        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    }
}

ssize_t fy_xfer_net_send(int fd, const struct iovec *iov, int iovcnt)
{
    struct msghdr m = {.msg_iov = (struct iovec *)iov,
                       .msg_iovlen = (size_t)iovcnt};
    for (;;) {
        /* MSG_NOSIGNAL: a peer that died must be an error, not SIGPIPE. */
        ssize_t n = sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n >= 0)
            return n;
        if (errno == EINTR)
            continue;
        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    }
}

ssize_t fy_xfer_net_recv(int fd, void *buf, size_t len)
{
    for (;;) {
        ssize_t n = recv(fd, buf, len, MSG_DONTWAIT);
        if (n > 0 || (n == 0 && len == 0))
            return n;
        if (n == 0)
            return -ECONNRESET;
        if (errno == EINTR)
            continue;
        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    }
}

static int wait_fd(int fd, short events)
{
    struct pollfd p = {.fd = fd, .events = events};
    int n;
    while ((n = poll(&p, 1, -1)) < 0 && errno == EINTR)
        ;
    return n < 0 ? -errno : 0;
}

int fy_xfer_net_send_all(int fd, const void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        struct iovec v = {(char *)buf + done, len - done};
        ssize_t n = fy_xfer_net_send(fd, &v, 1);
        if (n == -EAGAIN) {
            int rc = wait_fd(fd, POLLOUT);
            if (rc)
                return rc;
            continue;
        }
        if (n < 0)
            return (int)n;
        done += (size_t)n;
    }
    return 0;
}

int fy_xfer_net_recv_all(int fd, void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = fy_xfer_net_recv(fd, (char *)buf + done, len - done);
        if (n == -EAGAIN) {
            int rc = wait_fd(fd, POLLIN);
            if (rc)
                return rc;
            continue;
        }
        if (n < 0)
            return (int)n;
        done += (size_t)n;
    }
    return 0;
}

/* ---- the hello ------------------------------------------------------------
 */

static const char hello_magic[8] = {'F', 'e', 'r', 'r', 'y', 'N', 'e', 't'};

void fy_xfer_net_hello_make(struct fy_xfer_net_hello *h, uint32_t src,
                            uint32_t dst, uint64_t key, const char *jobid)
{
    memset(h, 0, sizeof(*h));
    memcpy(h->magic, hello_magic, sizeof(h->magic));
    h->version = FY_XFER_NET_VERSION;
    h->src = src;
    h->dst = dst;
    h->key = key;
    if (jobid) /* NUL-padded by the memset; the last byte stays NUL */
        memcpy(h->jobid, jobid, strnlen(jobid, sizeof(h->jobid) - 1));
}

int fy_xfer_net_hello_check(const struct fy_xfer_net_hello *h, uint32_t me,
                            uint32_t nranks, uint64_t key, const char *jobid)
{
    if (memcmp(h->magic, hello_magic, sizeof(h->magic)) ||
        h->version != FY_XFER_NET_VERSION)
        return -EPROTO;
    char want[sizeof(h->jobid)] = {0};
    strncpy(want, jobid ? jobid : "", sizeof(want) - 1);
    if (h->dst != me || h->key != key || h->src >= nranks || h->src == me ||
        memcmp(h->jobid, want, sizeof(want)))
        return -EACCES;
    return (int)h->src;
}

/* ---- probe ----------------------------------------------------------------
 */

/* A loopback round trip inside this process: listen, connect, accept, one
 * word each way. */
static bool net_probe(char *why, size_t whylen)
{
    char scratch[8];
    if (!why || !whylen) {
        why = scratch;
        whylen = sizeof(scratch);
    }
    int lfd = -1, c = -1, s = -1, rc;
    uint16_t port;
    const char *step = "listening on 127.0.0.1";
    rc = fy_xfer_net_listen(&lfd, &port);
    if (rc)
        goto fail;
    step = "connecting to 127.0.0.1";
    rc = fy_xfer_net_connect(port, &c);
    if (rc)
        goto close_listener;
    step = "accepting on 127.0.0.1";
    struct pollfd p = {.fd = lfd, .events = POLLIN};
    if (poll(&p, 1, 2000) != 1) {
        rc = -ETIMEDOUT;
        goto close_client;
    }
    rc = fy_xfer_net_accept(lfd, &s);
    if (rc)
        goto close_client;
    step = "a loopback round trip";
    uint64_t out = 0x46657272792d4e54ull, in = 0;
    rc = fy_xfer_net_send_all(c, &out, sizeof(out));
    if (!rc)
        rc = fy_xfer_net_recv_all(s, &in, sizeof(in));
    if (!rc && in != out)
        rc = -EPROTO;
    close(s);
close_client:
    close(c);
close_listener:
    close(lfd);
    if (!rc) {
        why[0] = '\0';
        return true;
    }
fail:
    snprintf(why, whylen, "%s failed: %s%s", step, strerror((int)-rc),
             rc == -EAFNOSUPPORT || rc == -EADDRNOTAVAIL || rc == -ENETUNREACH
                 ? " (no IPv4 loopback interface: a network namespace "
                   "without 'lo' up?)"
                 : "");
    return false;
}

/* ---- the per-pair streams ------------------------------------------------
 */

/* Precedes each message on a stream: the receive it is for and its
 * length, which the receiver checks against that receive. */
struct net_hdr {
    uint64_t cookie;
    uint64_t len;
};

#define NET_PENDING_MAX 64

struct net_pending {
    int fd;
    uint32_t got; /* bytes of the hello read so far */
    struct fy_xfer_net_hello hello;
};

struct net_peer {
    int out, in;         /* connections (see the invariants); -1: none */
    uint16_t port;       /* where the peer listens (0: unknown) */
    uint64_t key;        /* the peer's listener key */
    uint32_t hello_sent; /* bytes of our hello written to out */
    uint32_t hdr_sent;   /* bytes of the current header written */
    uint32_t hdr_got;    /* bytes of the incoming header read */
    bool tx_busy;        /* a push left bytes to send (poll out) */
    bool rx_busy;        /* a pull wants bytes not yet here (poll in) */
    bool want_in;        /* a pull waits for the peer to connect */
    struct net_hdr hdr_in;
};

static struct {
    int me, n;
    int lfd;
    uint64_t key;
    char jobid[64];
    struct net_peer *peers;
    struct net_pending pend[NET_PENDING_MAX];
    int npend;
    int nwant_in; /* peers with want_in set */
    struct pollfd *pfds;
} ep = {.lfd = -1};

static uint64_t random_key(void)
{
    uint64_t k = 0;
    if (getrandom(&k, sizeof(k), GRND_NONBLOCK) != (ssize_t)sizeof(k)) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        k = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^
            ((uint64_t)getpid() << 16) ^ (uint64_t)(uintptr_t)&k;
    }
    return k | 1; /* never 0 */
}

int fy_xfer_net_open(int me, int nranks, const char *jobid, uint16_t *port_out,
                     uint64_t *key_out)
{
    if (ep.peers || nranks < 1 || me < 0 || me >= nranks)
        return -EINVAL;
    struct net_peer *peers = calloc((size_t)nranks, sizeof(*peers));
    struct pollfd *pfds = malloc(
        ((size_t)2 * (size_t)nranks + NET_PENDING_MAX + 1) * sizeof(*pfds));
    if (!peers || !pfds) {
        free(peers);
        free(pfds);
        return -ENOMEM;
    }
    uint16_t port;
    int lfd;
    int rc = fy_xfer_net_listen(&lfd, &port);
    if (rc) {
        free(peers);
        free(pfds);
        return rc;
    }
    for (int p = 0; p < nranks; p++)
        peers[p].out = peers[p].in = -1;
    ep.me = me;
    ep.n = nranks;
    ep.lfd = lfd;
    ep.key = random_key();
    snprintf(ep.jobid, sizeof(ep.jobid), "%s", jobid ? jobid : "");
    ep.peers = peers;
    ep.pfds = pfds;
    ep.npend = ep.nwant_in = 0;
    *port_out = port;
    *key_out = ep.key;
    return 0;
}

void fy_xfer_net_peer(int peer, uint16_t port, uint64_t key)
{
    if (ep.peers && peer >= 0 && peer < ep.n) {
        ep.peers[peer].port = port;
        ep.peers[peer].key = key;
    }
}

static void pending_drop(int i)
{
    close(ep.pend[i].fd);
    ep.pend[i] = ep.pend[--ep.npend];
}

void fy_xfer_net_close(void)
{
    for (int p = 0; ep.peers && p < ep.n; p++) {
        if (ep.peers[p].out >= 0)
            close(ep.peers[p].out);
        if (ep.peers[p].in >= 0)
            close(ep.peers[p].in);
    }
    while (ep.npend)
        pending_drop(ep.npend - 1);
    if (ep.lfd >= 0)
        close(ep.lfd);
    ep.lfd = -1;
    free(ep.peers);
    ep.peers = NULL;
    free(ep.pfds);
    ep.pfds = NULL;
    ep.n = ep.nwant_in = 0;
}

bool fy_xfer_net_is_open(void)
{
    return ep.peers != NULL;
}

/* Take connections waiting on our listener and learn who they are: a
 * connection is adopted as peer p's only once its whole hello checked out
 * (our key, our job, a rank that has no connection to us yet). */
static int accept_all(void)
{
    int n = 0, fd;
    while (fy_xfer_net_accept(ep.lfd, &fd) == 0) {
        if (ep.npend == NET_PENDING_MAX) {
            FY_WARN("too many unidentified loopback connections; dropping one");
            pending_drop(0);
        }
        ep.pend[ep.npend++] = (struct net_pending){.fd = fd};
        n++;
    }
    for (int i = 0; i < ep.npend;) {
        struct net_pending *q = &ep.pend[i];
        ssize_t k = fy_xfer_net_recv(q->fd, (char *)&q->hello + q->got,
                                     sizeof(q->hello) - q->got);
        if (k == -EAGAIN) {
            i++;
            continue;
        }
        if (k < 0) {
            pending_drop(i);
            continue;
        }
        n++;
        q->got += (uint32_t)k;
        if (q->got < sizeof(q->hello))
            continue;
        int src = fy_xfer_net_hello_check(&q->hello, (uint32_t)ep.me,
                                          (uint32_t)ep.n, ep.key, ep.jobid);
        if (src < 0 || ep.peers[src].in >= 0) {
            FY_WARN("rejected a loopback connection that is not from a rank "
                    "of this job (%s)",
                    src == -EPROTO ? "not Ferry"
                    : src < 0      ? "wrong key or job"
                                   : "duplicate");
            pending_drop(i);
            continue;
        }
        struct net_peer *pp = &ep.peers[src];
        pp->in = q->fd;
        if (pp->want_in) {
            pp->want_in = false;
            ep.nwant_in--;
        }
        ep.pend[i] = ep.pend[--ep.npend];
    }
    return n;
}

int fy_xfer_net_push(int peer, uint64_t cookie, const uint8_t *src,
                     uint64_t len, uint64_t *done_io)
{
    if (!ep.peers || peer < 0 || peer >= ep.n || peer == ep.me)
        return -EINVAL;
    struct net_peer *pp = &ep.peers[peer];
    int n = 0;
    if (pp->out < 0) {
        int rc = pp->port ? fy_xfer_net_connect(pp->port, &pp->out) : -ENOTCONN;
        if (rc)
            return rc;
        pp->hello_sent = 0;
        n++;
    }
    struct fy_xfer_net_hello hello;
    fy_xfer_net_hello_make(&hello, (uint32_t)ep.me, (uint32_t)peer, pp->key,
                           ep.jobid);
    while (pp->hello_sent < sizeof(hello)) {
        struct iovec v = {(char *)&hello + pp->hello_sent,
                          sizeof(hello) - pp->hello_sent};
        ssize_t k = fy_xfer_net_send(pp->out, &v, 1);
        if (k == -EAGAIN) {
            pp->tx_busy = true;
            return n;
        }
        if (k < 0)
            return (int)k;
        pp->hello_sent += (uint32_t)k;
    }
    struct net_hdr h = {.cookie = cookie, .len = len};
    while (*done_io < len || pp->hdr_sent < sizeof(h)) {
        struct iovec v[2];
        int iv = 0;
        if (pp->hdr_sent < sizeof(h))
            v[iv++] = (struct iovec){(char *)&h + pp->hdr_sent,
                                     sizeof(h) - pp->hdr_sent};
        if (*done_io < len)
            v[iv++] = (struct iovec){(void *)(src + *done_io),
                                     (size_t)(len - *done_io)};
        ssize_t k = fy_xfer_net_send(pp->out, v, iv);
        if (k == -EAGAIN)
            break;
        if (k < 0)
            return (int)k;
        n++;
        if (pp->hdr_sent < sizeof(h)) {
            uint32_t hk =
                (uint32_t)FY_MIN((uint64_t)k, sizeof(h) - pp->hdr_sent);
            pp->hdr_sent += hk;
            k -= hk;
        }
        *done_io += (uint64_t)k;
    }
    bool finished = *done_io == len && pp->hdr_sent == sizeof(h);
    if (finished)
        pp->hdr_sent = 0; /* the next message starts with its header */
    pp->tx_busy = !finished;
    return n;
}

int fy_xfer_net_pull_hdr(int peer, uint64_t *cookie_out, uint64_t *len_out)
{
    if (!ep.peers || peer < 0 || peer >= ep.n || peer == ep.me)
        return -EINVAL;
    struct net_peer *pp = &ep.peers[peer];
    if (pp->in < 0) {
        accept_all();
        if (pp->in < 0) {
            if (!pp->want_in) {
                pp->want_in = true;
                ep.nwant_in++;
            }
            return 0;
        }
    }
    while (pp->hdr_got < sizeof(pp->hdr_in)) {
        ssize_t k = fy_xfer_net_recv(pp->in, (char *)&pp->hdr_in + pp->hdr_got,
                                     sizeof(pp->hdr_in) - pp->hdr_got);
        if (k == -EAGAIN) {
            pp->rx_busy = true;
            return 0;
        }
        if (k < 0)
            return (int)k;
        pp->hdr_got += (uint32_t)k;
    }
    pp->hdr_got = 0;
    *cookie_out = pp->hdr_in.cookie;
    *len_out = pp->hdr_in.len;
    return 1;
}

int fy_xfer_net_pull(int peer, uint8_t *dst, uint64_t len, uint64_t *done_io)
{
    if (!ep.peers || peer < 0 || peer >= ep.n || peer == ep.me ||
        ep.peers[peer].in < 0)
        return -EINVAL;
    struct net_peer *pp = &ep.peers[peer];
    int n = 0;
    while (*done_io < len) {
        ssize_t k =
            fy_xfer_net_recv(pp->in, dst + *done_io, (size_t)(len - *done_io));
        if (k == -EAGAIN)
            break;
        if (k < 0)
            return (int)k;
        n++;
        *done_io += (uint64_t)k;
    }
    pp->rx_busy = *done_io < len;
    return n;
}

bool fy_xfer_net_busy(void)
{
    if (!ep.peers)
        return false;
    if (ep.npend || ep.nwant_in)
        return true;
    for (int p = 0; p < ep.n; p++)
        if (ep.peers[p].tx_busy || ep.peers[p].rx_busy)
            return true;
    return false;
}

bool fy_xfer_net_visible(void)
{
    if (!ep.peers)
        return false;
    nfds_t n = 0;
    for (int p = 0; p < ep.n; p++) {
        struct net_peer *pp = &ep.peers[p];
        if (pp->tx_busy && pp->out >= 0)
            ep.pfds[n++] = (struct pollfd){.fd = pp->out, .events = POLLOUT};
        if (pp->rx_busy && pp->in >= 0)
            ep.pfds[n++] = (struct pollfd){.fd = pp->in, .events = POLLIN};
    }
    for (int i = 0; i < ep.npend; i++)
        ep.pfds[n++] = (struct pollfd){.fd = ep.pend[i].fd, .events = POLLIN};
    if (ep.nwant_in && ep.lfd >= 0)
        ep.pfds[n++] = (struct pollfd){.fd = ep.lfd, .events = POLLIN};
    return n && poll(ep.pfds, n, 0) > 0;
}

const struct fy_xfer_ops fy_xfer_net_ops = {
    .name = "net",
    .summary = "kernel TCP stack on 127.0.0.1 (the seed's NIC copy, "
               "without a NIC)",
    .probe = net_probe,
    .finalize = fy_xfer_net_close,
    .copy_local = fy_xfer_copy_libc,
};
