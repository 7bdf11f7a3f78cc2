/* SPDX-License-Identifier: MIT */
/* Helper for script.tcp_forge.* (expect_fatal.sh, FERRY_NODES=2, 2 ranks):
 * rank 1 sends rank 0 one message, which opens the TCP channel's stream
 * from rank 1 to rank 0 - the only connected TCP socket rank 1 then holds
 * - and writes a forged packet header into it behind the library's back
 * (MT_FORGE_MODE: "magic", a wrong magic; "length", a valid header whose
 * payload claims 2^40 bytes; "seq", a repeated pair sequence number).
 * Rank 0 must end the job with "malformed TCP packet header from rank 1"
 * and write nothing anywhere; rank 1 then blocks until it is killed. */
#include <dirent.h>
#include <sys/socket.h>
#include <unistd.h>

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

static int channel_socket(void)
{
    DIR *d = opendir("/proc/self/fd");
    MT_CHECK(d != NULL, "cannot list /proc/self/fd");
    int found = -1;
    for (struct dirent *e; (e = readdir(d));) {
        int fd = atoi(e->d_name);
        int listening = 0, type = 0;
        socklen_t l = sizeof(int);
        struct sockaddr_storage a;
        socklen_t al = sizeof(a);
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) == 0 &&
            type == SOCK_STREAM &&
            getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &l) == 0 &&
            !listening && getpeername(fd, (struct sockaddr *)&a, &al) == 0)
            found = fd;
    }
    closedir(d);
    MT_CHECK(found >= 0, "rank 1 holds no connected TCP socket");
    return found;
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
        struct forged_hdr h = {.magic = 0x70547946u,
                               .type = 1, /* EAGER */
                               .seq = 2,
                               .len = 4};
        if (!strcmp(mode, "magic"))
            h.magic = 0xdeadbeefu;
        else if (!strcmp(mode, "length"))
            h.len = (uint64_t)1 << 40;
        else
            h.seq = 1;
        int fd = channel_socket();
        uint8_t pkt[sizeof(h) + 4];
        memcpy(pkt, &h, sizeof(h));
        memcpy(pkt + sizeof(h), &x, 4);
        MT_CHECK(send(fd, pkt, sizeof(pkt), MSG_NOSIGNAL) ==
                     (ssize_t)sizeof(pkt),
                 "writing the forged header");
        MPI_Recv(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (mt_rank == 0) {
        MT_MPI(
            MPI_Recv(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_Recv(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MT_FAIL("the forged header (%s) was accepted", mode);
    return 1;
}
