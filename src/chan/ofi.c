/* SPDX-License-Identifier: MIT */
/* The libfabric channel (FERRY_NET=ofi): packets to ranks on other nodes
 * through one reliable-datagram endpoint (FI_EP_RDM, FI_MSG queues, the
 * provider's send-after-send order), chosen by FERRY_OFI_PROVIDER or left
 * to fi_getinfo. libfabric.so.1 is loaded at run time (dlopen), so libmpi
 * does not depend on it: only fi_getinfo, fi_freeinfo, fi_dupinfo,
 * fi_fabric and fi_strerror are looked up; everything else in libfabric's
 * API is inline calls through the objects' ops tables. Built only where
 * the headers (Debian libfabric-dev) were found; without them FERRY_NET=ofi
 * is refused with a clear message. Endpoint names travel through the
 * bootstrap's key-value exchange ("fy-ofi" = hex of fi_getname), inserted
 * into the address vector on a rank's first packet to a peer.
 *
 * Wire: one libfabric message per packet: a 64-byte header (struct
 * ofi_hdr, host byte order as in chan/tcp.c) and 'len' payload bytes. The
 * header names the sender (an RDM endpoint without FI_SOURCE does not say
 * who sent what) and carries the pair sequence number.
 *
 * Invariants of one process (all private memory):
 * - Receive buffers rbuf[i] (OFI_NRECV of them, each header + max_payload
 *   bytes) are either posted to the endpoint, or in ready[] (completed,
 *   not examined), or in held[] (examined: a checked header whose
 *   sequence number is not yet due, because the provider does not order
 *   completions), or being delivered. A buffer is posted again only after
 *   its packet was handed up (or was a goodbye).
 * - A header is checked (magic, sender, type, length against the type,
 *   the channel's limit and the bytes that arrived, context, sequence)
 *   before anything reads its payload; a payload is never copied
 *   anywhere: the layer above gets a pointer into the receive buffer.
 * - Send buffers sbuf[i] (OFI_NSEND of them) are free (on the free stack)
 *   or owned by the provider until their send completes. A packet is
 *   accepted whole or not at all; pe->sseq moves only when the provider
 *   took it. Header-only packets up to the provider's inject size go
 *   with fi_inject and need no buffer.
 * - After a peer's goodbye nothing more may come from it.
 * - Rendezvous (FI_RMA offered, FERRY_OFI_RMA=1): an RTS we send carries
 *   in ctl.offset the key of its buffer, registered through the pin-down
 *   cache (xfer/pin.h) and held in regs[] under the RTS's cookie until the
 *   receiver's CTS or FIN names that cookie; ctl.addr then is what the
 *   reader adds offsets to. The receiver reads with fi_read (ofi_read,
 *   called by proto/rndv.c) and answers FIN; key 0 means "stream it".
 * - Write protocol (the same condition): an OFFER we send names a receive
 *   buffer; we register it for the peer's remote writes (the receive
 *   direction of the pin-down cache: remote write access, never remote
 *   read), hold it in regs[] under the OFFER's cookie (marked as an offer:
 *   no CTS or FIN releases it) until proto/write.c ends the offer
 *   (ofi_offer_end: WDONE, REVOKED, or the offer went stale), and send
 *   its key as the OFFER's 8-byte payload, the one packet type that has
 *   a payload here and not on shared memory (key 0: not registered, the
 *   offer only keeps its place). The writer puts the bytes with fi_write
 *   and waits for the completion before its WDONE: with the provider's
 *   send-after-write order (FI_ORDER_SAW) a transmit completion is
 *   enough, otherwise it asks for delivery completion.
 * - Every call into libfabric that may free memory (its progress runs
 *   inside them) is bracketed by fy_pin_defer_begin/end: the provider may
 *   free memory that shares a page with a cached registration while it
 *   holds its own lock, and deregistering there (fi_close) would take
 *   that lock again.
 *
 * Waiting: the completion queue's wait object (FI_WAIT_FD) and a pipe of
 * our own sit in one epoll set; ranks of our node that would ring our
 * futex doorbell see FY_SLEEP_NET and write a byte to the pipe, as with
 * the TCP channel. Before sleeping, fi_trywait says whether the CQ must be
 * read first. A wait object costs every completion a signal (on
 * tcp;ofi_rxm a pipe write: about 1 us of a 6.5 us one-way latency), so
 * it is made only where ranks sleep (FERRY_OFI_WAIT=auto: they outnumber
 * cores, or FERRY_WAIT=block); ranks that spin never use it. Without one
 * (that, FERRY_OFI_WAIT=poll, or a provider that has no fd) a sleep lasts
 * 50 us, doubling while nothing completes, up to 1 ms. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "boot/boot.h"
#include "chan/chan.h"
#include "shm/shm.h"
#include "util/copy.h"
#include "util/mt.h"
#include "xfer/pin.h"

struct fy_chan_counts fy_chan_ofi_counts;

#ifdef FERRY_HAVE_OFI

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#define OFI_MAGIC 0x664f7946u               /* "FyOf" */
#define OFI_BYE 0x80u                       /* channel-internal packet type */
#define OFI_CHUNK ((uint64_t)128 << 10)     /* DATA payload per packet */
#define OFI_RMA_PIECE ((uint64_t)256 << 10) /* bytes per fi_read/fi_write */
#define OFI_RMA_WAVE 16                     /* of them issued at once */
#define OFI_NRECV 32
#define OFI_NSEND 32
#define OFI_KEY "fy-ofi"
#define OFI_NAME_MAX 128 /* endpoint name bytes we publish (hex: twice) */
#define OFI_API FI_VERSION(1, 9)

struct ofi_hdr {
    uint32_t magic;
    uint8_t type; /* enum fy_pkt_type or OFI_BYE */
    uint8_t pad[3];
    uint32_t src; /* sender's world rank */
    int32_t tag;
    uint32_t ctx;
    uint32_t len; /* payload bytes after the header */
    uint64_t seq; /* the pair sequence number */
    struct fy_ctl ctl;
};
static_assert(sizeof(struct ofi_hdr) == 64, "the header is 64 bytes");

/* A buffer the provider owns while an operation on it is outstanding;
 * 'ctx' first: the operation's context (FI_CONTEXT mode). */
struct ofi_buf {
    struct fi_context ctx;
    uint8_t *mem;
    uint32_t idx;
    bool send;
    bool read; /* an fi_read/fi_write of ofi_rma(), not a pool buffer */
    bool done; /* read: completed (err: how) */
    int err;
    int peer;     /* send, read: the other side */
    uint64_t got; /* receive: bytes that arrived */
};

/* A user buffer registered for the peers' fi_read, named by the sender's
 * rendezvous cookie until the receiver's CTS or FIN for it. */
struct ofi_reg {
    uint64_t cookie;
    struct fy_pin_entry *e;
    bool offer; /* an OFFER's receive buffer, not an RTS's */
};

struct ofi_peer {
    fi_addr_t addr; /* FI_ADDR_NOTAVAIL: not inserted yet */
    bool bye_in, bye_out;
};

/* libfabric.so.1, loaded once and kept (providers may leave threads). */
static struct {
    void *lib;
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t,
                   const struct fi_info *, struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric_open)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
} lf;

static struct {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    struct fid_mr *mr; /* both pools, when the provider wants FI_MR_LOCAL */
    void *desc;
    int cq_fd;   /* -1: the CQ has no fd to wait on */
    long nap_ns; /* no fd: the next sleep's length (grows while idle) */
    int epfd, wake_rd, wake_wr;
    size_t inject;
    uint64_t max_payload;
    size_t bufsize;
    uint8_t *pool; /* OFI_NRECV + OFI_NSEND buffers of bufsize */
    struct ofi_buf rbuf[OFI_NRECV], sbuf[OFI_NSEND];
    uint32_t sfree[OFI_NSEND], nsfree;
    uint32_t ready[OFI_NRECV], nready_head, nready; /* FIFO of rbuf idx */
    uint32_t held[OFI_NRECV], nheld;
    int P, me, nremote, byes_in;
    bool rma;                 /* RTS offer fi_read of the sender's buffer,
                               * OFFERs fi_write into the receiver's */
    uint64_t write_flags;     /* fi_writemsg: completion semantics */
    uint64_t rma_piece;       /* OFI_RMA_PIECE, or less if the provider's
                               * messages are shorter */
    uint64_t next_key;        /* when the provider lets us choose keys */
    struct fy_pin_cache *pin; /* registrations of user buffers */
    struct ofi_reg *regs;
    size_t nregs, capregs;
    struct ofi_peer *peers;
    int *pokefd; /* [local rank]: its wake pipe, -1 not open, -2 refused */
} ofi = {.cq_fd = -1, .epfd = -1, .wake_rd = -1, .wake_wr = -1};

static const char *ofi_err(int rc)
{
    return lf.strerror ? lf.strerror(rc < 0 ? -rc : rc) : "libfabric error";
}

static _Noreturn void ofi_bad(int src, const char *what)
{
    fy_fatal(1, "malformed OFI packet from rank %d (%s)", src, what);
}

static _Noreturn void ofi_die(const char *what, int rc)
{
    fy_fatal(1, "OFI channel: %s failed: %s", what, ofi_err(rc));
}

/* ---- loading libfabric and choosing a provider ----------------------- */

/* Load libfabric.so.1 once. 0 or -ENOTSUP with 'why' filled. */
static int ofi_load(char *why, size_t wlen)
{
    if (lf.lib)
        return 0;
    void *lib = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, wlen,
                 "libfabric.so.1 cannot be loaded (%s): install Debian's "
                 "libfabric1",
                 dlerror());
        return -ENOTSUP;
    }
    static const struct {
        const char *name;
        size_t off;
    } syms[] = {
        {"fi_getinfo", offsetof(__typeof__(lf), getinfo)},
        {"fi_freeinfo", offsetof(__typeof__(lf), freeinfo)},
        {"fi_dupinfo", offsetof(__typeof__(lf), dupinfo)},
        {"fi_fabric", offsetof(__typeof__(lf), fabric_open)},
        {"fi_strerror", offsetof(__typeof__(lf), strerror)},
    };
    for (size_t i = 0; i < FY_ARRAY_LEN(syms); i++) {
        void *f = dlsym(lib, syms[i].name);
        if (!f) {
            snprintf(why, wlen, "libfabric.so.1 has no %s", syms[i].name);
            dlclose(lib);
            return -ENOTSUP;
        }
        memcpy((char *)&lf + syms[i].off, &f, sizeof(f));
    }
    lf.lib = lib;
    return 0;
}

/* The providers that offer what the channel needs (FERRY_OFI_PROVIDER
 * names one, else any), best first; *out to free with lf.freeinfo. 0 or
 * -ENOTSUP with 'why' filled. */
static int ofi_find(struct fi_info **out, char *why, size_t wlen)
{
    int rc = ofi_load(why, wlen);
    if (rc)
        return rc;
    struct fi_info *hints = lf.dupinfo(NULL);
    if (!hints) {
        snprintf(why, wlen, "out of memory");
        return -ENOMEM;
    }
    const char *prov = fy_env_str(FY_ENV_OFI_PROVIDER);
    hints->caps = FI_MSG | FI_RMA;
    hints->mode = FI_CONTEXT;
    hints->ep_attr->type = FI_EP_RDM;
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    hints->domain_attr->mr_mode =
        FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY;
    if (prov[0])
        hints->fabric_attr->prov_name = strdup(prov);
    struct fi_info *list = NULL;
    rc = lf.getinfo(OFI_API, NULL, NULL, 0, hints, &list);
    if (rc || !list) {
        /* Without RMA: rendezvous data is streamed. */
        hints->caps = FI_MSG;
        rc = lf.getinfo(OFI_API, NULL, NULL, 0, hints, &list);
    }
    lf.freeinfo(hints);
    if (rc || !list) {
        snprintf(why, wlen,
                 "libfabric offers no %s%s%sprovider of reliable datagrams "
                 "with ordered messages here (%s)",
                 prov[0] ? "'" : "", prov, prov[0] ? "' " : "",
                 rc ? ofi_err(rc) : "empty list");
        return -ENOTSUP;
    }
    *out = list;
    return 0;
}

/* On virtual nodes of one machine, a loopback domain when offered. */
static struct fi_info *ofi_pick(struct fi_info *list)
{
    if (fy_boot.virtual_nodes)
        for (struct fi_info *i = list; i; i = i->next)
            if (i->domain_attr && i->domain_attr->name &&
                !strcmp(i->domain_attr->name, "lo") &&
                i->addr_format == FI_SOCKADDR_IN)
                return i;
    return list;
}

int fy_chan_ofi_probe(char *prov_out, size_t plen, char *why, size_t wlen)
{
    struct fi_info *list;
    int rc = ofi_find(&list, why, wlen);
    if (rc)
        return rc;
    struct fi_info *i = ofi_pick(list);
    snprintf(prov_out, plen, "%s (domain %s%s)", i->fabric_attr->prov_name,
             i->domain_attr->name ? i->domain_attr->name : "?",
             (i->caps & FI_RMA)
                 ? "; rendezvous by fi_read, write protocol by fi_write"
                 : "; rendezvous streamed");
    lf.freeinfo(list);
    return 0;
}

/* ---- completions ------------------------------------------------------- */

static int cq_drain(void);

static void post_recv(struct ofi_buf *b)
{
    for (;;) {
        fy_pin_defer_begin();
        ssize_t rc = fi_recv(ofi.ep, b->mem, ofi.bufsize, ofi.desc,
                             FI_ADDR_UNSPEC, &b->ctx);
        fy_pin_defer_end();
        if (rc == 0)
            return;
        if (rc != -FI_EAGAIN)
            ofi_die("posting a receive", (int)rc);
        cq_drain(); /* progress; completions read are kept */
    }
}

static void cq_error(void)
{
    struct fi_cq_err_entry err = {0};
    fy_pin_defer_begin();
    ssize_t rc = fi_cq_readerr(ofi.cq, &err, 0);
    fy_pin_defer_end();
    if (rc < 0)
        ofi_die("reading a completion error", (int)rc);
    struct ofi_buf *b = err.op_context;
    if (b && b->read) {
        /* ofi_rma reports it: the peer's key or range may be bad. */
        b->err = err.err ? err.err : FI_EIO;
        b->done = true;
        return;
    }
    if (b && !b->send) {
        /* A message larger than any legal packet (or otherwise broken):
         * name the sender its header claims, if it is a rank at all. */
        struct ofi_hdr h;
        memcpy(&h, b->mem, sizeof(h));
        if (err.err == FI_ETRUNC && h.src < (uint32_t)ofi.P)
            ofi_bad((int)h.src, "payload length");
        fy_fatal(1, "OFI channel: a receive failed: %s",
                 ofi_err(err.err ? err.err : (int)err.prov_errno));
    }
    if (b && b->send &&
        (err.err == FI_ECONNRESET || err.err == EPIPE ||
         err.err == FI_ENOTCONN || err.err == FI_ECONNREFUSED))
        fy_chan_peer_gone(b->peer);
    fy_fatal(1, "OFI channel: a send to rank %d failed: %s", b ? b->peer : -1,
             ofi_err(err.err));
}

/* Read every completion the CQ has: sends free their buffers, receives
 * wait in ready[] for the next poll. Returns how many. */
static int cq_drain(void)
{
    int n = 0;
    for (;;) {
        struct fi_cq_msg_entry e[16];
        fy_pin_defer_begin(); /* the provider's progress frees memory */
        ssize_t k = fi_cq_read(ofi.cq, e, FY_ARRAY_LEN(e));
        fy_pin_defer_end();
        if (k == -FI_EAGAIN)
            return n;
        if (k == -FI_EAVAIL) {
            cq_error();
            continue;
        }
        if (k < 0)
            ofi_die("reading the completion queue", (int)k);
        for (ssize_t i = 0; i < k; i++) {
            struct ofi_buf *b = e[i].op_context;
            if (b->read) {
                b->done = true;
            } else if (b->send) {
                ofi.sfree[ofi.nsfree++] = b->idx;
            } else {
                b->got = e[i].len;
                uint32_t at = (ofi.nready_head + ofi.nready) % OFI_NRECV;
                ofi.ready[at] = b->idx;
                ofi.nready++;
            }
        }
        n += (int)k;
        ofi.nap_ns = 0; /* work came: the next sleep is short again */
    }
}

/* ---- registration -------------------------------------------------------
 * User buffers are registered through the pin-down cache (xfer/pin.h):
 * registrations are kept after use and found again by address range,
 * dropped when the memory is freed or unmapped, bounded per direction
 * (FERRY_PIN_SEND_MAX/RECV_MAX). A buffer the budget cannot take now is
 * simply not offered for fi_read: its data is streamed after a CTS. */

static int pin_reg(void *ctx, void *addr, size_t len, enum fy_pin_dir dir,
                   void **handle_out)
{
    (void)ctx;
    uint64_t key = 0;
    if (!(ofi.info->domain_attr->mr_mode & FI_MR_PROV_KEY))
        key = ++ofi.next_key;
    /* Send buffers: the source of our writes, read by peers (RTS). Receive
     * buffers: the destination of our reads, written by peers (OFFER). */
    uint64_t access = dir == FY_PIN_SEND ? FI_WRITE | FI_REMOTE_READ
                                         : FI_READ | FI_REMOTE_WRITE;
    struct fid_mr *mr;
    int rc = fi_mr_reg(ofi.domain, addr, len, access, 0, key, 0, &mr, NULL);
    if (rc) {
        FY_DEBUG("OFI channel: registering %zu bytes: %s", len, ofi_err(rc));
        return -EIO;
    }
    *handle_out = mr;
    return 0;
}

static int pin_dereg(void *ctx, void *addr, size_t len, void *handle)
{
    (void)ctx;
    (void)addr;
    (void)len;
    return fi_close(&((struct fid_mr *)handle)->fid) ? -EIO : 0;
}

static const struct fy_pin_ops ofi_pin_ops = {
    .name = "ofi", .reg = pin_reg, .dereg = pin_dereg};

/* Get a registration covering [addr, addr + len): the one place user
 * memory is registered. 0 with *e_out (hold it until ofi_mr_put), or a
 * negative errno (-EAGAIN, -E2BIG: the budget cannot take it now). */
static int ofi_mr_get(const void *addr, uint64_t len, enum fy_pin_dir dir,
                      struct fy_pin_entry **e_out)
{
    return fy_pin_cache_acquire(ofi.pin, addr, (size_t)len, dir, e_out);
}

static void ofi_mr_put(struct fy_pin_entry *e)
{
    fy_pin_cache_release(ofi.pin, e);
}

static struct fid_mr *entry_mr(const struct fy_pin_entry *e)
{
    return fy_pin_entry_handle(e);
}

/* Open the buffer of an RTS (for the peer's fi_read) or of an OFFER (for
 * its fi_write) to the peer: register it and rewrite ctl's addr into what
 * the peer adds offsets to (the virtual address, or the offset in the
 * registration when the provider counts from its start). Returns the key,
 * 0: not opened (the receiver of an RTS answers CTS; an OFFER cannot be
 * written into). The registration lasts until the receiver's CTS or FIN
 * names the RTS's cookie, or the OFFER's ends (ofi_offer_end). */
static uint64_t reg_key(struct fy_ctl *ctl, bool offer)
{
    struct fy_pin_entry *e = NULL;
    for (size_t i = 0; i < ofi.nregs && !e; i++)
        if (ofi.regs[i].cookie == ctl->cookie && ofi.regs[i].offer == offer)
            e = ofi.regs[i].e; /* a retried packet */
    if (!e) {
        if (ofi.nregs == ofi.capregs) {
            size_t cap = ofi.capregs ? 2 * ofi.capregs : 16;
            struct ofi_reg *v = realloc(ofi.regs, cap * sizeof(*v));
            if (!v)
                return 0;
            ofi.regs = v;
            ofi.capregs = cap;
        }
        if (ofi_mr_get((const void *)(uintptr_t)ctl->addr, ctl->total,
                       offer ? FY_PIN_RECV : FY_PIN_SEND, &e))
            return 0;
        uint64_t key = fi_mr_key(entry_mr(e));
        if (key == 0 || key == FI_KEY_NOTAVAIL) {
            ofi_mr_put(e);
            return 0;
        }
        ofi.regs[ofi.nregs++] =
            (struct ofi_reg){.cookie = ctl->cookie, .e = e, .offer = offer};
    }
    if (!(ofi.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR))
        ctl->addr -= (uint64_t)(uintptr_t)fy_pin_entry_addr(e);
    return fi_mr_key(entry_mr(e));
}

/* Release the registration held for the RTS or OFFER 'cookie'. */
static void reg_drop(uint64_t cookie, bool offer)
{
    for (size_t i = 0; i < ofi.nregs; i++)
        if (ofi.regs[i].cookie == cookie && ofi.regs[i].offer == offer) {
            ofi_mr_put(ofi.regs[i].e);
            ofi.regs[i] = ofi.regs[--ofi.nregs];
            return;
        }
}

/* The receiver answered our RTS 'cookie' (CTS: it streams; FIN: it read). */
static void rts_answered(uint64_t cookie)
{
    reg_drop(cookie, false);
}

static bool ofi_offers(void)
{
    return ofi.rma;
}

/* proto/write.c is done with our OFFER 'cookie' to 'peer'. */
static void ofi_offer_end(int peer, uint64_t cookie)
{
    (void)peer;
    reg_drop(cookie, true);
}

/* ---- sending ----------------------------------------------------------- */

/* The peer's address, inserted from the key-value exchange on first use. */
static fi_addr_t peer_addr(int peer)
{
    struct ofi_peer *op = &ofi.peers[peer];
    if (op->addr != FI_ADDR_NOTAVAIL)
        return op->addr;
    char val[FY_BOOT_VALUE_MAX];
    uint8_t name[OFI_NAME_MAX];
    int rc = fy_boot.ops->kvs_get(peer, OFI_KEY, val, sizeof(val));
    size_t n = rc ? 0 : strlen(val);
    bool ok = !rc && n && n % 2 == 0 && n / 2 <= sizeof(name);
    for (size_t i = 0; ok && i < n / 2; i++) {
        unsigned v;
        ok = sscanf(val + 2 * i, "%2x", &v) == 1;
        name[i] = (uint8_t)v;
    }
    if (!ok)
        fy_fatal(1, "OFI channel: rank %d published no usable address (%s)",
                 peer, rc ? strerror(-rc) : val);
    fi_addr_t a = FI_ADDR_NOTAVAIL;
    fy_pin_defer_begin();
    rc = fi_av_insert(ofi.av, name, 1, &a, 0, NULL);
    fy_pin_defer_end();
    if (rc != 1)
        fy_fatal(1, "OFI channel: cannot insert rank %d's address: %s", peer,
                 ofi_err(rc < 0 ? rc : FI_EINVAL));
    op->addr = a;
    return a;
}

static bool ofi_writable(int peer)
{
    (void)peer;
    if (!ofi.nsfree)
        cq_drain();
    return ofi.nsfree > 0;
}

static bool send_pkt(int peer, uint32_t type, int32_t tag, uint32_t ctx,
                     const struct fy_ctl *ctl, const void *data, uint64_t len)
{
    if (len > ofi.max_payload)
        fy_fatal(1, "OFI channel: a %llu-byte packet exceeds the limit",
                 (unsigned long long)len);
    fi_addr_t a = peer_addr(peer);
    struct fy_chan_peer *pe = &fy_chan.peers[peer];
    struct ofi_hdr h = {.magic = OFI_MAGIC,
                        .type = (uint8_t)type,
                        .src = (uint32_t)ofi.me,
                        .tag = tag,
                        .ctx = ctx,
                        .len = (uint32_t)len,
                        .seq = pe->sseq + 1};
    if (ctl)
        h.ctl = *ctl;
    else
        h.ctl.total = len;
    /* RTS: offset is free; it carries the key of the registered buffer
     * for the receiver's fi_read (0: stream it after a CTS instead). */
    if (type == FY_PKT_RTS)
        h.ctl.offset = ofi.rma && h.ctl.total ? reg_key(&h.ctl, false) : 0;
    /* OFFER: its key, as its payload (offset is taken). */
    uint64_t key;
    if (type == FY_PKT_OFFER) {
        key = ofi.rma && h.ctl.total ? reg_key(&h.ctl, true) : 0;
        data = &key;
        len = h.len = sizeof(key);
    }
    ssize_t rc;
    if (len == 0 && sizeof(h) <= ofi.inject && type != OFI_BYE) {
        fy_pin_defer_begin();
        rc = fi_inject(ofi.ep, &h, sizeof(h), a);
        fy_pin_defer_end();
    } else {
        if (!ofi.nsfree && !ofi_writable(peer))
            return false;
        struct ofi_buf *b = &ofi.sbuf[ofi.sfree[ofi.nsfree - 1]];
        memcpy(b->mem, &h, sizeof(h));
        if (len)
            fy_copy(b->mem + sizeof(h), data, (size_t)len);
        b->peer = peer;
        fy_pin_defer_begin();
        rc = fi_send(ofi.ep, b->mem, sizeof(h) + (size_t)len, ofi.desc, a,
                     &b->ctx);
        fy_pin_defer_end();
        if (rc == 0)
            ofi.nsfree--;
    }
    if (rc == -FI_EAGAIN) {
        cq_drain(); /* progress, so the next try may succeed */
        return false;
    }
    if (rc)
        ofi_die("sending", (int)rc);
    pe->sseq++;
    return true;
}

static bool ofi_try_send(int peer, uint32_t type, int32_t tag, uint32_t ctx,
                         const struct fy_ctl *ctl, const void *data,
                         uint64_t len)
{
    return send_pkt(peer, type, tag, ctx, ctl,
                    fy_pkt_has_payload(type) ? data : NULL,
                    fy_pkt_has_payload(type) ? len : 0);
}

/* ---- receiving --------------------------------------------------------- */

/* Check the header of a completed receive before anything trusts it. */
static void check_hdr(const struct ofi_buf *b, struct ofi_hdr *h)
{
    if (b->got < sizeof(*h))
        ofi_bad(b->got >= 12 ? (int)((const struct ofi_hdr *)b->mem)->src : -1,
                "short packet");
    memcpy(h, b->mem, sizeof(*h));
    int src = (int)h->src;
    if (h->src >= (uint32_t)ofi.P || !fy_chan_remote(src))
        fy_fatal(1, "malformed OFI packet from an unknown sender (rank %u)",
                 h->src);
    if (h->magic != OFI_MAGIC)
        ofi_bad(src, "bad magic");
    if (ofi.peers[src].bye_in)
        ofi_bad(src, "packet after goodbye");
    if (h->type == OFI_BYE) {
        if (h->len)
            ofi_bad(src, "goodbye with a payload");
    } else if (h->type < FY_PKT_EAGER || h->type >= FY_PKT_MAX) {
        ofi_bad(src, "unknown packet type");
    } else if (h->type == FY_PKT_OFFER) {
        if (h->len != sizeof(uint64_t))
            ofi_bad(src, "offer without its key");
    } else if (!fy_pkt_has_payload(h->type) ? h->len != 0
                                            : h->len > ofi.max_payload) {
        ofi_bad(src, "payload length");
    }
    if (b->got != sizeof(*h) + (uint64_t)h->len)
        ofi_bad(src, "payload length");
    if (h->ctx >= (1u << 12))
        ofi_bad(src, "context");
    /* Due, or a little early (completions may come out of order); never
     * one already handed up or further ahead than our buffers. */
    uint64_t due = fy_chan.peers[src].rseq;
    if (h->seq < due || h->seq - due >= OFI_NRECV)
        ofi_bad(src, "sequence");
}

/* Hand up the checked packet in 'b' (due now), then post 'b' again. */
static void deliver(struct ofi_buf *b, const struct ofi_hdr *h)
{
    int src = (int)h->src;
    fy_chan.peers[src].rseq++;
    if (h->type == OFI_BYE) {
        ofi.peers[src].bye_in = true;
        ofi.byes_in++;
    } else {
        struct fy_pkt p = {.src = src,
                           .type = h->type,
                           .tag = h->tag,
                           .ctx = h->ctx,
                           .data = b->mem + sizeof(*h),
                           .len = h->len,
                           .ctl = h->ctl,
                           .lane = FY_LANE_NET};
        if ((h->type == FY_PKT_CTS || h->type == FY_PKT_FIN) && ofi.nregs)
            rts_answered(h->ctl.cookie);
        /* A message of ours cancelled unread: ctl.addr is its cookie. */
        if (h->type == FY_PKT_CANCEL && h->ctl.offset == FY_CANCEL_YES &&
            ofi.nregs)
            rts_answered(h->ctl.addr);
        if (h->type == FY_PKT_OFFER) {
            memcpy(&p.key, p.data, sizeof(p.key));
            p.data = NULL;
            p.len = 0;
        }
        fy_chan_count(&fy_chan_ofi_counts, &p);
        fy_chan.deliver(&p);
    }
    post_recv(b);
}

/* Deliver held packets that became due. */
static int deliver_held(void)
{
    int n = 0;
    for (uint32_t i = 0; i < ofi.nheld;) {
        struct ofi_buf *b = &ofi.rbuf[ofi.held[i]];
        struct ofi_hdr h;
        memcpy(&h, b->mem, sizeof(h)); /* checked when it came */
        if (h.seq < fy_chan.peers[h.src].rseq)
            ofi_bad((int)h.src, "sequence"); /* a second one with it */
        if (h.seq != fy_chan.peers[h.src].rseq) {
            i++;
            continue;
        }
        ofi.held[i] = ofi.held[--ofi.nheld];
        deliver(b, &h);
        n++;
        i = 0; /* it may have made another one due */
    }
    return n;
}

static int ofi_poll(void)
{
    cq_drain();
    int n = 0;
    while (ofi.nready) {
        struct ofi_buf *b = &ofi.rbuf[ofi.ready[ofi.nready_head]];
        ofi.nready_head = (ofi.nready_head + 1) % OFI_NRECV;
        ofi.nready--;
        struct ofi_hdr h;
        check_hdr(b, &h);
        if (h.seq != fy_chan.peers[h.src].rseq) {
            ofi.held[ofi.nheld++] = b->idx;
            continue;
        }
        deliver(b, &h);
        n++;
        if (ofi.nheld)
            n += deliver_held();
    }
    return n;
}

static bool ofi_visible(void)
{
    if (!ofi.nready)
        cq_drain();
    return ofi.nready > 0;
}

/* ---- one-sided reads and writes --------------------------------------- */

/* Read bytes [off, off + len) of a peer's registered buffer (its address
 * 'addr', its key 'key', as its RTS or OFFER said) into 'local', or write
 * them from 'local' into it; waits for the operations' completions,
 * progressing the endpoint meanwhile (the peer's own operations on our
 * buffers are served by that progress too). The bytes go as up to
 * OFI_RMA_WAVE operations of OFI_RMA_PIECE at once: on tcp;ofi_rxm one
 * 1 MiB fi_read moved 3.3-3.6 GB/s, four concurrent 256 KiB ones 7.1-7.7
 * (bench/README.md, "The goals met"). Returns len, or a negative errno
 * (logged): the key or range was refused. */
static ssize_t ofi_rma(int peer, bool write, uint8_t *local, uint64_t addr,
                       uint64_t key, uint64_t off, uint64_t len)
{
    struct ofi_buf op[OFI_RMA_WAVE];
    struct fy_pin_entry *e = NULL;
    void *desc = NULL;
    if (ofi.info->domain_attr->mr_mode & FI_MR_LOCAL) {
        int rc = ofi_mr_get(local, len, write ? FY_PIN_SEND : FY_PIN_RECV, &e);
        if (rc) {
            FY_ERROR("OFI channel: cannot register %llu bytes to %s: %s",
                     (unsigned long long)len,
                     write ? "write from" : "read into", strerror(-rc));
            return -EIO;
        }
        desc = fi_mr_desc(entry_mr(e));
    }
    fi_addr_t a = peer_addr(peer);
    ssize_t rc = 0;
    for (uint64_t at = 0; !rc && at < len;) {
        int k = 0;
        for (; k < OFI_RMA_WAVE && at < len; k++) {
            uint64_t n = FY_MIN(ofi.rma_piece, len - at);
            op[k] = (struct ofi_buf){.read = true, .peer = peer};
            struct iovec iov = {.iov_base = local + at, .iov_len = (size_t)n};
            struct fi_rma_iov riov = {
                .addr = addr + off + at, .len = (size_t)n, .key = key};
            struct fi_msg_rma msg = {.msg_iov = &iov,
                                     .desc = &desc,
                                     .iov_count = 1,
                                     .addr = a,
                                     .rma_iov = &riov,
                                     .rma_iov_count = 1,
                                     .context = &op[k].ctx};
            for (;;) {
                fy_pin_defer_begin();
                rc = write ? fi_writemsg(ofi.ep, &msg, ofi.write_flags)
                           : fi_read(ofi.ep, local + at, (size_t)n, desc, a,
                                     addr + off + at, key, &op[k].ctx);
                fy_pin_defer_end();
                if (rc != -FI_EAGAIN)
                    break;
                cq_drain();
            }
            if (rc)
                break;
            at += n;
        }
        /* Every operation issued completes before we return (their
         * contexts live here), failed or not. */
        for (int i = 0; i < k; i++) {
            while (!op[i].done) {
                cq_drain();
                struct fid *f = &ofi.cq->fid;
                if (!op[i].done && ofi.cq_fd >= 0 &&
                    fi_trywait(ofi.fabric, &f, 1) == 0) {
                    struct epoll_event ev;
                    epoll_wait(ofi.epfd, &ev, 1, 1);
                }
            }
            if (op[i].err && !rc)
                rc = -op[i].err;
        }
    }
    if (e)
        ofi_mr_put(e);
    if (rc) {
        FY_ERROR("OFI channel: %s %llu bytes of rank %d's buffer: %s",
                 write ? "writing" : "reading", (unsigned long long)len, peer,
                 ofi_err((int)rc));
        return -EIO;
    }
    return (ssize_t)len;
}

static ssize_t ofi_read(int peer, uint8_t *dest, uint64_t addr, uint64_t key,
                        uint64_t off, uint64_t len)
{
    return ofi_rma(peer, false, dest, addr, key, off, len);
}

static ssize_t ofi_write(int peer, const uint8_t *src, uint64_t addr,
                         uint64_t key, uint64_t off, uint64_t len)
{
    return ofi_rma(peer, true, (uint8_t *)src, addr, key, off, len);
}

/* ---- waiting ----------------------------------------------------------- */

static void drain_wake(void)
{
    char b[64];
    while (read(ofi.wake_rd, b, sizeof(b)) > 0)
        ;
}

static void ofi_sleep(bool (*more_work)(void))
{
    struct fy_chan_bell *my = &fy_chan.bells[fy_chan.local_me];
    atomic_fetch_add_explicit(&my->sleeping, FY_SLEEP_NET,
                              memory_order_seq_cst);
    /* F2 (as in fy_chan_sleep): pairs with F1 in fy_wake_slow: a rank of
     * this node either sees 'sleeping' and writes our pipe, or its packet
     * is visible to the check below. */
    atomic_thread_fence(memory_order_seq_cst);
    if (!fy_chan_visible() && !(more_work && more_work())) {
        /* fi_trywait: 0 means the CQ's fd will signal anything new;
         * otherwise the CQ has something to read now: do not sleep.
         * Without an fd the CQ is polled after a nap that doubles from
         * 50 us to 1 ms while nothing completes (cq_drain resets it). */
        struct fid *f = &ofi.cq->fid;
        long ns;
        if (ofi.cq_fd < 0) {
            ns = ofi.nap_ns =
                ofi.nap_ns ? FY_MIN(2 * ofi.nap_ns, 1000000L) : 50000L;
        } else if (fi_trywait(ofi.fabric, &f, 1) != 0) {
            ns = 0;
        } else {
            ns = atomic_load_explicit(&my->nopoke, memory_order_relaxed)
                     ? 1000000L
                     : 20000000L;
        }
        if (ns) {
            struct epoll_event ev[4];
            struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
            int d = fy_mt_wait_begin(); /* other threads may use MPI */
            int k = epoll_pwait2(ofi.epfd, ev, 4, &ts, NULL);
            if (k < 0 && errno == ENOSYS) /* kernels before 5.11 */
                k = epoll_wait(ofi.epfd, ev, 4, (int)((ns + 999999) / 1000000));
            fy_mt_wait_end(d);
            for (int i = 0; i < k; i++)
                if (ev[i].data.u32 == 1)
                    drain_wake();
        }
    }
    atomic_fetch_sub_explicit(&my->sleeping, FY_SLEEP_NET,
                              memory_order_relaxed);
}

void fy_chan_ofi_poke(int local)
{
    if (ofi.pokefd)
        fy_chan_poke_pipe(ofi.pokefd, local);
}

/* ---- shutdown ---------------------------------------------------------- */

static void ofi_bye(void)
{
    for (int p = 0; p < ofi.P; p++) {
        if (!fy_chan_remote(p) || ofi.peers[p].bye_out)
            continue;
        /* Behind everything sent before: the peer reads it last. It takes
         * a send buffer, so quiet() waits until the provider is done. */
        while (!ofi.nsfree || !send_pkt(p, OFI_BYE, 0, 0, NULL, NULL, 0)) {
            cq_drain();
            usleep(100);
        }
        ofi.peers[p].bye_out = true;
    }
}

static bool ofi_quiet(void)
{
    cq_drain();
    return ofi.byes_in >= ofi.nremote && ofi.nsfree == OFI_NSEND;
}

const struct fy_chan_ops fy_chan_ofi_ops = {
    .name = "ofi",
    .try_send = ofi_try_send,
    .poll = ofi_poll,
    .visible = ofi_visible,
    .writable = ofi_writable,
    .sleep = ofi_sleep,
    .bye = ofi_bye,
    .quiet = ofi_quiet,
    .poke = fy_chan_ofi_poke,
    .read = ofi_read,
    .offers = ofi_offers,
    .write = ofi_write,
    .offer_end = ofi_offer_end,
    .counts = &fy_chan_ofi_counts,
    .chunk = OFI_CHUNK,
    /* Pushed 64 KiB-1 MiB messages ran up to 7x slower in 16 KiB pieces
     * than in 64 or 128 KiB ones over tcp;ofi_rxm; 128 KiB was the best
     * of the three under FERRY_PROTO=auto (bench/README.md, "Pushes
     * across nodes"). */
    .push_chunk = OFI_CHUNK,
};

/* ---- start-up ---------------------------------------------------------- */

static int ofi_open(struct fi_info *info)
{
    int rc;
    const char *what;
#define TRY(call, name)                                                        \
    do {                                                                       \
        what = name;                                                           \
        if ((rc = (call)) != 0)                                                \
            goto fail;                                                         \
    } while (0)
    TRY(lf.fabric_open(info->fabric_attr, &ofi.fabric, NULL), "fi_fabric");
    TRY(fi_domain(ofi.fabric, info, &ofi.domain, NULL), "fi_domain");
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_MSG,
                             .size = 4 * (OFI_NRECV + OFI_NSEND),
                             .wait_obj = FI_WAIT_FD};
    const char *wait = fy_env_str(FY_ENV_OFI_WAIT);
    bool want_fd =
        !strcmp(wait, "fd") || (!strcmp(wait, "auto") && fy_chan.wake_peers);
    if (!want_fd) {
        cqa.wait_obj = FI_WAIT_NONE;
        TRY(fi_cq_open(ofi.domain, &cqa, &ofi.cq, NULL), "fi_cq_open");
    } else if (fi_cq_open(ofi.domain, &cqa, &ofi.cq, NULL) == 0) {
        if (fi_control(&ofi.cq->fid, FI_GETWAIT, &ofi.cq_fd) != 0)
            ofi.cq_fd = -1;
    } else {
        FY_INFO("OFI channel: the provider's completion queue has no fd to "
                "wait on: sleeping ranks poll it every 50 us to 1 ms");
        cqa.wait_obj = FI_WAIT_NONE;
        TRY(fi_cq_open(ofi.domain, &cqa, &ofi.cq, NULL), "fi_cq_open");
    }
    struct fi_av_attr ava = {.type = FI_AV_UNSPEC};
    TRY(fi_av_open(ofi.domain, &ava, &ofi.av, NULL), "fi_av_open");
    TRY(fi_endpoint(ofi.domain, info, &ofi.ep, NULL), "fi_endpoint");
    TRY(fi_ep_bind(ofi.ep, &ofi.cq->fid, FI_TRANSMIT | FI_RECV),
        "binding the CQ");
    TRY(fi_ep_bind(ofi.ep, &ofi.av->fid, 0), "binding the AV");
    TRY(fi_enable(ofi.ep), "fi_enable");
    if (info->domain_attr->mr_mode & FI_MR_LOCAL) {
        TRY(fi_mr_reg(ofi.domain, ofi.pool,
                      (OFI_NRECV + OFI_NSEND) * ofi.bufsize, FI_SEND | FI_RECV,
                      0, 0, 0, &ofi.mr, NULL),
            "registering the buffers");
        ofi.desc = fi_mr_desc(ofi.mr);
    }
    return 0;
fail:
    FY_ERROR("OFI channel (provider %s): %s failed: %s",
             info->fabric_attr->prov_name, what, ofi_err(rc));
    return -EIO;
#undef TRY
}

int fy_chan_ofi_init(void)
{
    char why[256];
    if (!fy_boot.ops || !fy_boot.ops->kvs_put || !fy_boot.ops->kvs_get ||
        !fy_boot.ops->fence) {
        FY_ERROR("ranks on other nodes, but the launcher has no key-value "
                 "exchange to find them");
        return -ENOTSUP;
    }
    struct fi_info *list;
    int rc = ofi_find(&list, why, sizeof(why));
    if (rc) {
        FY_ERROR("FERRY_NET=ofi: %s", why);
        return rc;
    }
    ofi.info = lf.dupinfo(ofi_pick(list));
    lf.freeinfo(list);
    if (!ofi.info)
        return -ENOMEM;
    ofi.P = fy_boot.size;
    ofi.me = fy_boot.rank;
    ofi.nremote = fy_boot.size - fy_boot.local_size;
    ofi.inject = ofi.info->tx_attr->inject_size;
    ofi.rma = (ofi.info->caps & FI_RMA) && fy_env_int(FY_ENV_OFI_RMA);
    /* A write's completion must mean its bytes are placed before our next
     * packet (the WDONE) is: the provider's order gives that with the
     * default completion, else ask for delivery completion. */
    ofi.write_flags = FI_COMPLETION;
    if (!(ofi.info->tx_attr->msg_order & FI_ORDER_SAW))
        ofi.write_flags |= FI_DELIVERY_COMPLETE;
    ofi.rma_piece = FY_MIN(OFI_RMA_PIECE, ofi.info->ep_attr->max_msg_size);
    ofi.max_payload = FY_MAX(OFI_CHUNK, fy_chan.cell_payload);
    ofi.bufsize =
        FY_ALIGN_UP(sizeof(struct ofi_hdr) + ofi.max_payload, (size_t)4096);
    if (ofi.info->ep_attr->max_msg_size < ofi.bufsize) {
        FY_ERROR("FERRY_NET=ofi: provider %s sends at most %zu bytes at once",
                 ofi.info->fabric_attr->prov_name,
                 ofi.info->ep_attr->max_msg_size);
        return -ENOTSUP;
    }
    ofi.peers = calloc((size_t)ofi.P, sizeof(*ofi.peers));
    ofi.pokefd = malloc((size_t)fy_boot.local_size * sizeof(*ofi.pokefd));
    if (posix_memalign((void **)&ofi.pool, 4096,
                       (OFI_NRECV + OFI_NSEND) * ofi.bufsize))
        ofi.pool = NULL;
    if (!ofi.peers || !ofi.pokefd || !ofi.pool)
        return -ENOMEM;
    for (int l = 0; l < fy_boot.local_size; l++)
        ofi.pokefd[l] = -1;
    for (int p = 0; p < ofi.P; p++)
        ofi.peers[p].addr = FI_ADDR_NOTAVAIL;
    rc = ofi_open(ofi.info);
    if (rc)
        return rc;
    if (ofi.rma || (ofi.info->domain_attr->mr_mode & FI_MR_LOCAL)) {
        rc = fy_pin_cache_create(&ofi_pin_ops, NULL, NULL, &ofi.pin);
        if (rc) {
            FY_ERROR("OFI channel: the pin-down cache: %s", strerror(-rc));
            return rc;
        }
    }

    ofi.epfd = epoll_create1(EPOLL_CLOEXEC);
    int pfd[2];
    if (ofi.epfd < 0 || pipe2(pfd, O_NONBLOCK | O_CLOEXEC) != 0) {
        FY_ERROR("OFI channel: epoll or pipe: %m");
        return -EIO;
    }
    ofi.wake_rd = pfd[0];
    ofi.wake_wr = pfd[1];
    struct epoll_event e = {.events = EPOLLIN, .data.u32 = 1};
    if (epoll_ctl(ofi.epfd, EPOLL_CTL_ADD, ofi.wake_rd, &e) != 0)
        return -EIO;
    if (ofi.cq_fd >= 0) {
        e.data.u32 = 0;
        if (epoll_ctl(ofi.epfd, EPOLL_CTL_ADD, ofi.cq_fd, &e) != 0) {
            FY_INFO("OFI channel: cannot wait on the CQ's fd: %m");
            ofi.cq_fd = -1;
        }
    }
    atomic_store_explicit(&fy_chan.bells[fy_chan.local_me].wake_fd,
                          (uint32_t)ofi.wake_wr + 1, memory_order_relaxed);

    for (uint32_t i = 0; i < OFI_NRECV + OFI_NSEND; i++) {
        bool send = i >= OFI_NRECV;
        struct ofi_buf *b = send ? &ofi.sbuf[i - OFI_NRECV] : &ofi.rbuf[i];
        *b = (struct ofi_buf){.mem = ofi.pool + i * ofi.bufsize,
                              .idx = send ? i - OFI_NRECV : i,
                              .send = send,
                              .peer = -1};
        if (send)
            ofi.sfree[ofi.nsfree++] = b->idx;
        else
            post_recv(b);
    }

    uint8_t name[OFI_NAME_MAX];
    size_t nlen = sizeof(name);
    rc = fi_getname(&ofi.ep->fid, name, &nlen);
    if (rc || nlen > sizeof(name) || 2 * nlen >= FY_BOOT_VALUE_MAX) {
        FY_ERROR("OFI channel: the endpoint's name: %s",
                 rc ? ofi_err(rc) : "too long");
        return -EIO;
    }
    char val[FY_BOOT_VALUE_MAX];
    for (size_t i = 0; i < nlen; i++)
        snprintf(val + 2 * i, 3, "%02x", name[i]);
    rc = fy_boot.ops->kvs_put(OFI_KEY, val);
    if (rc || (rc = fy_boot.ops->fence()))
        return rc;
    FY_DEBUG("OFI channel: provider %s, name %s",
             ofi.info->fabric_attr->prov_name, val);
    return 0;
}

static void ofi_close(struct fid *f)
{
    if (f)
        fi_close(f);
}

void fy_chan_ofi_finalize(void)
{
    for (size_t i = 0; i < ofi.nregs; i++)
        ofi_mr_put(ofi.regs[i].e);
    free(ofi.regs);
    fy_pin_cache_destroy(ofi.pin); /* before the domain closes */
    if (ofi.ep)
        ofi_close(&ofi.ep->fid);
    if (ofi.mr)
        ofi_close(&ofi.mr->fid);
    if (ofi.av)
        ofi_close(&ofi.av->fid);
    if (ofi.cq)
        ofi_close(&ofi.cq->fid);
    if (ofi.domain)
        ofi_close(&ofi.domain->fid);
    if (ofi.fabric)
        ofi_close(&ofi.fabric->fid);
    if (ofi.info)
        lf.freeinfo(ofi.info);
    for (int l = 0; ofi.pokefd && l < fy_boot.local_size; l++)
        if (ofi.pokefd[l] >= 0)
            close(ofi.pokefd[l]);
    int fds[] = {ofi.wake_rd, ofi.wake_wr, ofi.epfd};
    for (size_t i = 0; i < FY_ARRAY_LEN(fds); i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(ofi.peers);
    free(ofi.pokefd);
    free(ofi.pool);
    memset(&ofi, 0, sizeof(ofi));
    ofi.cq_fd = ofi.epfd = ofi.wake_rd = ofi.wake_wr = -1;
}

#else /* !FERRY_HAVE_OFI */

/* Built without libfabric's headers: the channel is not there. */
int fy_chan_ofi_init(void)
{
    FY_ERROR("FERRY_NET=ofi: this Ferry is built without libfabric "
             "(install Debian's libfabric-dev and rebuild)");
    return -ENOTSUP;
}

void fy_chan_ofi_finalize(void) {}

void fy_chan_ofi_poke(int local)
{
    (void)local;
}

int fy_chan_ofi_probe(char *prov_out, size_t plen, char *why, size_t wlen)
{
    (void)prov_out;
    (void)plen;
    snprintf(why, wlen, "built without libfabric (Debian libfabric-dev)");
    return -ENOTSUP;
}

/* Never selected (fy_chan_ofi_init fails first); here so the ops table
 * can be named without #ifdefs elsewhere. */
const struct fy_chan_ops fy_chan_ofi_ops = {
    .name = "ofi",
    .counts = &fy_chan_ofi_counts,
};

#endif /* FERRY_HAVE_OFI */
