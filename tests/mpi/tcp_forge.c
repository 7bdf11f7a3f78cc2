/* SPDX-License-Identifier: MIT */
/* Helper for script.tcp_forge.* (expect_fatal.sh, FERRY_NODES=2, 2 ranks):
 * rank 1 sends rank 0 one message and gets one back, which opens the TCP
 * channel's connection between them (rank 0, the lower rank, connects to
 * rank 1's listener: the connected socket of rank 1 whose local port is
 * its listener's) - and rank 1 writes a forged packet header into it
 * behind the library's back
 * (MT_FORGE_MODE: "magic", a wrong magic; "length", a valid header whose
 * payload claims 2^40 bytes; "seq", a repeated pair sequence number).
 * Rank 0 must end the job with "malformed TCP packet header from rank 1"
 * and write nothing anywhere; rank 1 then blocks until it is killed.
 * Two modes forge a well-formed CANCEL (src/p2p/cancel.c) instead:
 * "cancel_ahead" asks back a message rank 0 never received,
 * "cancel_answer" answers a cancel rank 0 never asked; rank 0 must end the
 * job with "malformed packet from rank 1". Mode "random<seed>" writes a
 * stream of well-framed packets (right magic and sequence) of random
 * type, tag, context, control fields and payload - the steered payloads
 * of a network channel included - and then one of an unknown type: the
 * job must end with a "malformed" (or "out of memory", for a pushed
 * message claiming more than the machine holds) error, never a crash or
 * a hang. */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

#include "forge_random.h"
#include "mpitest.h"

/* The wire header of src/chan/tcp.c (struct tcp_hdr). */
struct forged_hdr {
    uint32_t magic;
    uint8_t type, pad[3];
    int32_t tag;
    uint32_t ctx;
    uint64_t seq, len;
    uint64_t ctl[4];
};

/* The local port of stream socket fd (0 if none); *listening set. */
static int local_port(int fd, int *listening)
{
    int type = 0;
    socklen_t l = sizeof(int);
    struct sockaddr_in a;
    socklen_t al = sizeof(a);
    *listening = 0;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) != 0 ||
        type != SOCK_STREAM ||
        getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, listening, &l) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &al) != 0 ||
        a.sin_family != AF_INET)
        return 0;
    return ntohs(a.sin_port);
}

/* pass 0: the listener's port; pass 1: the connected socket on it. */
static int channel_socket(void)
{
    int lport = 0, found = -1;
    for (int pass = 0; pass < 2; pass++) {
        DIR *d = opendir("/proc/self/fd");
        MT_CHECK(d != NULL, "cannot list /proc/self/fd");
        for (struct dirent *e; (e = readdir(d));) {
            int fd = atoi(e->d_name), listening;
            int port = local_port(fd, &listening);
            struct sockaddr_storage a;
            socklen_t al = sizeof(a);
            if (pass == 0 && port && listening)
                lport = port;
            else if (pass == 1 && port == lport && !listening &&
                     getpeername(fd, (struct sockaddr *)&a, &al) == 0)
                found = fd;
        }
        closedir(d);
    }
    MT_CHECK(found >= 0, "rank 1 holds no connection to its listener");
    return found;
}

/* Mode random<seed> (forge_random.h): one packet on the socket. */
static bool tcp_put(void *arg, const struct forge_pkt *p,
                    const uint8_t *payload)
{
    static uint8_t pkt[sizeof(struct forged_hdr) + FORGE_MAXLEN];
    int fd = *(const int *)arg;
    struct forged_hdr h = {.magic = 0x70547946u,
                           .type = p->type,
                           .tag = p->tag,
                           .ctx = p->ctx,
                           .seq = p->seq,
                           .len = p->len};
    memcpy(h.ctl, p->ctl, sizeof(h.ctl));
    memcpy(pkt, &h, sizeof(h));
    memcpy(pkt + sizeof(h), payload, (size_t)p->len);
    size_t n = sizeof(h) + (size_t)p->len;
    return send(fd, pkt, n, MSG_NOSIGNAL) == (ssize_t)n;
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    mt_init(&argc, &argv);
    const char *mode = getenv("MT_FORGE_MODE");
    mode = mode ? mode : "magic";
    int x = 42;
    if (mt_rank == 1) {
        MT_MPI(MPI_Send(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
        MT_MPI(
            MPI_Recv(&x, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        struct forged_hdr h = {.magic = 0x70547946u,
                               .type = 1, /* EAGER */
                               .seq = 2,
                               .len = 4};
        size_t plen = 4;
        if (!strcmp(mode, "magic")) {
            h.magic = 0xdeadbeefu;
        } else if (!strcmp(mode, "length")) {
            h.len = (uint64_t)1 << 40;
        } else if (!strncmp(mode, "cancel_", 7)) {
            /* FY_PKT_CANCEL: ctl = {message number, cookie echo, answer
             * cookie, FY_CANCEL_ASK (0) or FY_CANCEL_YES (2)}. */
            h.type = 15;
            h.len = 0;
            plen = 0;
            h.ctl[0] = 1000;
            h.ctl[2] = 12345;
            h.ctl[3] = !strcmp(mode, "cancel_ahead") ? 0 : 2;
        } else {
            h.seq = 1;
        }
        int fd = channel_socket();
        if (!strncmp(mode, "random", 6)) {
            /* The sequence number due, as the cancel modes' (2). */
            forge_random(tcp_put, &fd, strtoull(mode + 6, NULL, 10), 2);
            MPI_Recv(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MT_FAIL("the forged stream (%s) was accepted", mode);
        }
        uint8_t pkt[sizeof(h) + 4];
        memcpy(pkt, &h, sizeof(h));
        memcpy(pkt + sizeof(h), &x, 4);
        MT_CHECK(send(fd, pkt, sizeof(h) + plen, MSG_NOSIGNAL) ==
                     (ssize_t)(sizeof(h) + plen),
                 "writing the forged header");
        MPI_Recv(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (mt_rank == 0) {
        MT_MPI(
            MPI_Recv(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MT_MPI(MPI_Send(&x, 1, MPI_INT, 1, 3, MPI_COMM_WORLD));
        MPI_Recv(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MT_FAIL("the forged header (%s) was accepted", mode);
    return 1;
}
