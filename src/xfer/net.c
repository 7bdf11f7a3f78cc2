/* SPDX-License-Identifier: MIT */
/* The seed's "NIC copy" without a NIC: the kernel's TCP stack on the
 * loopback interface (127.0.0.1). Two-sided and two copies (into the
 * sender's socket buffer, out of the receiver's), each a system call; it
 * is the baseline every shared-memory path must beat, and the path a
 * multi-node job would take. The library's per-peer streams are driven
 * from the progress engine (src/p2p/rndv.c); this file holds the socket
 * plumbing, the connection hello and the mechanism's ops table. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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
    strncpy(h->jobid, jobid ? jobid : "", sizeof(h->jobid) - 1);
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

const struct fy_xfer_ops fy_xfer_net_ops = {
    .name = "net",
    .summary = "kernel TCP stack on 127.0.0.1 (the seed's NIC copy, "
               "without a NIC)",
    .probe = net_probe,
    .copy_local = fy_xfer_copy_libc,
};
