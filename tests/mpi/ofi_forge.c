/* SPDX-License-Identifier: MIT */
/* Helper for script.ofi_forge.* (expect_fatal.sh, FERRY_NODES=2,
 * FERRY_NET=ofi, 2 ranks): rank 0 tells rank 1 the address its libfabric
 * endpoint listens on (the only listening TCP socket it holds, with the
 * tcp provider); rank 1 opens an endpoint of its own behind the library's
 * back and sends rank 0 one forged packet claiming to come from rank 1
 * (MT_FORGE_MODE: "magic", a wrong magic; "length", a header whose payload
 * claims 4 GiB; "seq", a pair sequence number already used; "short", 20
 * bytes; "huge", a whole 1 MiB packet, more than any receive buffer;
 * "ahead", a valid packet whose sequence number is far ahead; "offer", a
 * write-protocol OFFER whose payload is not its 8-byte key; "random<seed>",
 * a stream of well-framed random packets, forge_random.h, which must end
 * "malformed" or "out of memory").
 * Rank 0 must end the job with "malformed OFI packet from rank 1"
 * and write nothing anywhere; rank 1 then blocks until it is killed.
 * libfabric is loaded with dlopen, as the library does; without its
 * headers at build time the program only says so (the test is not
 * registered then). */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "forge_random.h"
#include "mpitest.h"

#if __has_include(<rdma/fabric.h>)
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

/* The wire header of src/chan/ofi.c (struct ofi_hdr). */
struct forged_hdr {
    uint32_t magic;
    uint8_t type, pad[3];
    uint32_t src;
    int32_t tag;
    uint32_t ctx;
    uint32_t len;
    uint64_t seq;
    uint64_t ctl[4];
};

/* Rank 0: the address of its (only) listening IPv4 TCP socket. */
static struct sockaddr_in listen_addr(void)
{
    DIR *d = opendir("/proc/self/fd");
    MT_CHECK(d != NULL, "cannot list /proc/self/fd");
    struct sockaddr_in found = {0};
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        int fd = atoi(e->d_name);
        int listening = 0, type = 0;
        socklen_t l = sizeof(int);
        struct sockaddr_in a;
        socklen_t al = sizeof(a);
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) == 0 &&
            type == SOCK_STREAM &&
            getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &l) == 0 &&
            listening && getsockname(fd, (struct sockaddr *)&a, &al) == 0 &&
            a.sin_family == AF_INET) {
            found = a;
            n++;
        }
    }
    closedir(d);
    MT_CHECK(n == 1, "rank 0 holds %d listening TCP sockets, not 1", n);
    return found;
}

/* Rank 1's endpoint of its own, opened once, and rank 0's address. */
struct forger {
    struct fid_ep *ep;
    struct fid_cq *cq;
    fi_addr_t dst;
};

static struct forger forger_open(const struct sockaddr_in *to)
{
    void *lib = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    MT_CHECK(lib != NULL, "dlopen libfabric.so.1: %s", dlerror());
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t,
                   const struct fi_info *, struct fi_info **);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    *(void **)&getinfo = dlsym(lib, "fi_getinfo");
    *(void **)&dupinfo = dlsym(lib, "fi_dupinfo");
    *(void **)&fabric = dlsym(lib, "fi_fabric");
    MT_CHECK(getinfo && dupinfo && fabric, "libfabric symbols");
    struct fi_info *hints = dupinfo(NULL), *info = NULL;
    hints->caps = FI_MSG;
    hints->mode = FI_CONTEXT;
    hints->ep_attr->type = FI_EP_RDM;
    hints->addr_format = FI_SOCKADDR_IN;
    hints->fabric_attr->prov_name = strdup("tcp");
    MT_CHECK(getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &info) == 0,
             "fi_getinfo");
    struct fid_fabric *fab;
    struct fid_domain *dom;
    struct fid_cq *cq;
    struct fid_av *av;
    struct fid_ep *ep;
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_CONTEXT};
    struct fi_av_attr ava = {.type = FI_AV_UNSPEC};
    MT_CHECK(fabric(info->fabric_attr, &fab, NULL) == 0 &&
                 fi_domain(fab, info, &dom, NULL) == 0 &&
                 fi_cq_open(dom, &cqa, &cq, NULL) == 0 &&
                 fi_av_open(dom, &ava, &av, NULL) == 0 &&
                 fi_endpoint(dom, info, &ep, NULL) == 0 &&
                 fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV) == 0 &&
                 fi_ep_bind(ep, &av->fid, 0) == 0 && fi_enable(ep) == 0,
             "opening a libfabric endpoint");
    struct forger f = {.ep = ep, .cq = cq};
    MT_CHECK(fi_av_insert(av, to, 1, &f.dst, 0, NULL) == 1,
             "inserting rank 0's address");
    /* The endpoint stays open: closing it could race the delivery. */
    return f;
}

/* Send 'len' bytes from our endpoint; false if the send failed (rank 0
 * has ended the job). */
static bool forger_send(struct forger *f, const void *pkt, size_t len)
{
    static struct fi_context ctx;
    ssize_t rc;
    while ((rc = fi_send(f->ep, pkt, len, NULL, f->dst, &ctx)) == -FI_EAGAIN)
        fi_cq_read(f->cq, NULL, 0);
    if (rc != 0)
        return false;
    struct fi_cq_entry e;
    while ((rc = fi_cq_read(f->cq, &e, 1)) == -FI_EAGAIN)
        ;
    return rc == 1;
}

/* Mode random<seed> (forge_random.h): one packet from our endpoint. */
static bool ofi_put(void *arg, const struct forge_pkt *p,
                    const uint8_t *payload)
{
    static uint8_t pkt[sizeof(struct forged_hdr) + FORGE_MAXLEN];
    struct forged_hdr h = {.magic = 0x664f7946u,
                           .type = p->type,
                           .src = 1,
                           .tag = p->tag,
                           .ctx = p->ctx,
                           .len = (uint32_t)p->len,
                           .seq = p->seq};
    memcpy(h.ctl, p->ctl, sizeof(h.ctl));
    memcpy(pkt, &h, sizeof(h));
    memcpy(pkt + sizeof(h), payload, (size_t)p->len);
    return forger_send(arg, pkt, sizeof(h) + (size_t)p->len);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    const char *mode = getenv("MT_FORGE_MODE");
    mode = mode ? mode : "magic";
    int x = 42;
    struct sockaddr_in a;
    if (mt_rank == 0) {
        MT_MPI(
            MPI_Recv(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        a = listen_addr();
        MT_MPI(MPI_Send(&a, sizeof(a), MPI_BYTE, 1, 3, MPI_COMM_WORLD));
        MPI_Recv(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (mt_rank == 1) {
        MT_MPI(MPI_Send(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
        MT_MPI(MPI_Recv(&a, sizeof(a), MPI_BYTE, 0, 3, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        if (!strncmp(mode, "random", 6)) {
            /* The sequence number due after rank 1's one message. */
            struct forger f = forger_open(&a);
            forge_random(ofi_put, &f, strtoull(mode + 6, NULL, 10), 2);
            MPI_Recv(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MT_FAIL("the forged stream (%s) was accepted", mode);
        }
        struct forged_hdr h = {.magic = 0x664f7946u,
                               .type = 1, /* EAGER */
                               .src = 1,
                               .tag = 1,
                               .seq = 1000,
                               .len = 4};
        size_t len = sizeof(h) + 4;
        if (!strcmp(mode, "magic"))
            h.magic = 0xdeadbeefu;
        else if (!strcmp(mode, "length"))
            h.len = 0xffffffffu;
        else if (!strcmp(mode, "short"))
            len = 20;
        else if (!strcmp(mode, "ahead"))
            ; /* valid but for seq 1000: further ahead than any buffering */
        else if (!strcmp(mode, "huge"))
            len = (size_t)1 << 20; /* more than any receive buffer */
        else if (!strcmp(mode, "offer"))
            h.type = 10; /* OFFER with 4 bytes where its 8-byte key goes */
        else
            h.seq = 1; /* rank 1's first packet to rank 0 had it */
        if (len > sizeof(h) + 4)
            h.len = (uint32_t)(len - sizeof(h));
        uint8_t *pkt = calloc(1, len > sizeof(h) + 4 ? len : sizeof(h) + 4);
        MT_CHECK(pkt != NULL, "out of memory");
        memcpy(pkt, &h, sizeof(h));
        memcpy(pkt + sizeof(h), &x, 4);
        struct forger f = forger_open(&a);
        MT_CHECK(forger_send(&f, pkt, len), "the forged send failed");
        MPI_Recv(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MT_FAIL("the forged packet (%s) was accepted", mode);
    return 1;
}

#else

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("ofi_forge: built without libfabric's headers\n");
    return 77;
}

#endif
