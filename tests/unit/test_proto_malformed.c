/* SPDX-License-Identifier: MIT */
/* Malformed protocol packets from a peer (src/proto/push.c, write.c,
 * src/p2p/cancel.c): a
 * forged packet ends the receiving rank with a clear "malformed ..."
 * error and exit status 1 - never a crash, a hang or a write outside a
 * buffer. Two forked processes run the point-to-point core; rank 0 forges
 * one packet per case with the library's own packet sender, rank 1 drives
 * progress (or, for the offer cases, sends into what was offered). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boot/boot.h"
#include "harness.h"
#include "p2p/p2p_impl.h"
#include "pair.h"
#include "proto/proto.h"
#include "util/util.h"

enum forged {
    PUSH_DATA_ALONE,  /* pushed bytes for no message being pushed */
    PUSH_TOO_LONG,    /* a PUSH claiming more pushed bytes than the message */
    OFFER_FUTURE,     /* an offer counting messages never sent */
    OFFER_BAD_KIND,   /* an offer naming a mechanism that does not exist */
    OFFER_BAD_ADDR,   /* an offer of an address the offerer does not map */
    WDONE_NO_RECEIVE, /* a write into no offered receive */
    CANCEL_AHEAD,     /* a cancel of a message never received */
    CANCEL_ANSWER,    /* an answer to a cancel never asked */
    CANCEL_WHAT,      /* a cancel that neither asks nor answers */
    PUSH_THEN_MSG,    /* a message before the pushed bytes of the last */
    NCASES
};

static const char *const case_names[NCASES] = {
    "PUSH_DATA with no push under way", "PUSH longer than its message",
    "OFFER counting unsent messages",   "OFFER naming no mechanism",
    "OFFER of an unmapped buffer",      "WDONE for no offered receive",
    "CANCEL of an unsent message",      "CANCEL answer to no cancel",
    "CANCEL saying nothing known",      "a message inside a push",
};

/* Rank 0: forge the packet, then keep progressing until killed. */
static _Noreturn void forger(enum forged k)
{
    struct fy_ctl ctl = {0};
    uint32_t type = 0;
    int32_t tag = 5;
    switch (k) {
    case PUSH_DATA_ALONE:
        type = FY_PKT_PUSH_DATA;
        ctl = (struct fy_ctl){.total = 100000, .addr = 50000, .offset = 64};
        break;
    case PUSH_TOO_LONG:
        type = FY_PKT_PUSH;
        ctl = (struct fy_ctl){.total = 10, .offset = 100000};
        break;
    case OFFER_FUTURE:
        type = FY_PKT_OFFER;
        ctl = (struct fy_ctl){.total = 65536,
                              .addr = 4096,
                              .offset = 7 | (uint64_t)FY_XFER_CMA << 56};
        break;
    case OFFER_BAD_KIND:
        type = FY_PKT_OFFER;
        ctl = (struct fy_ctl){
            .total = 65536, .addr = 4096, .offset = (uint64_t)200 << 56};
        break;
    case OFFER_BAD_ADDR:
        /* Valid but for the address: page 1 is never mapped. */
        type = FY_PKT_OFFER;
        ctl = (struct fy_ctl){.total = 1 << 20,
                              .addr = 4096,
                              .cookie = 1,
                              .offset = (uint64_t)FY_XFER_CMA << 56};
        break;
    case WDONE_NO_RECEIVE:
        type = FY_PKT_WDONE;
        ctl = (struct fy_ctl){.total = 10, .cookie = 12345, .offset = 10};
        break;
    case CANCEL_AHEAD:
        type = FY_PKT_CANCEL;
        ctl = (struct fy_ctl){
            .total = 1000, .cookie = 1, .offset = FY_CANCEL_ASK};
        break;
    case CANCEL_ANSWER:
        type = FY_PKT_CANCEL;
        ctl = (struct fy_ctl){
            .total = 1, .cookie = 12345, .offset = FY_CANCEL_YES};
        break;
    case CANCEL_WHAT:
        type = FY_PKT_CANCEL;
        ctl = (struct fy_ctl){.total = 1, .cookie = 1, .offset = 7};
        break;
    case PUSH_THEN_MSG: {
        /* A well-formed PUSH saying more pushed bytes follow, then an
         * eager message instead of them (found by test_proto_fuzz: a
         * second PUSH there made the first one's bytes "lost"). */
        static unsigned char first[64];
        struct fy_ctl push = {.total = 100000, .cookie = 1, .offset = 50000};
        while (!fy_chan_try_send(1, FY_PKT_PUSH, tag, 0, &push, first,
                                 sizeof(first)))
            fy_progress();
        type = FY_PKT_EAGER;
        break;
    }
    default:
        _exit(3);
    }
    /* Straight into the channel, payload and all, as a peer could. */
    static unsigned char payload[64];
    uint64_t len = fy_pkt_has_payload(type) ? sizeof(payload) : 0;
    while (!fy_chan_try_send(1, type, tag, 0, &ctl, payload, len))
        fy_progress();
    for (;;) {
        fy_progress();
        usleep(1000);
    }
}

/* Rank 1: take packets; for the bad address, send into the offer. */
static int victim(enum forged k, struct fy_comm *c)
{
    if (k == OFFER_BAD_ADDR) {
        while (!fy_p2p.peers[0].offer_head)
            fy_progress();
        size_t n = 65536;
        unsigned char *buf = calloc(1, n);
        fy_p2p_send(buf, (MPI_Count)n, fy_dtype_get(MPI_BYTE), 0, 5, c, 0,
                    FY_SEND_STANDARD);
        return 0; /* not reached: the write must fail loudly */
    }
    for (int i = 0; i < 5000; i++) {
        fy_progress();
        usleep(1000);
    }
    return 0; /* not reached: the packet must end the rank */
}

/* A rank of case *(int *)arg: rank 0 forges, rank 1 is the victim. */
static int rank_role(int rank, struct fy_test_pair *p, void *arg)
{
    enum forged k = (enum forged) * (const int *)arg;
    if (rank == 0)
        forger(k);
    return victim(k, &p->c);
}

int main(void)
{
    alarm(120);
    /* The victim's 64 KiB send must take the forged offer, not a push
     * (FERRY_PUSH_MAX=auto may push it whole on a machine where cma is
     * slow). */
    setenv("FERRY_PUSH_MAX", "0", 1);
    for (int k = 0; k < NCASES; k++) {
        pid_t pid[2];
        /* Only the victim's errors: the pipe ends with it. */
        int errfd =
            fy_test_pair_spawn("ferry-test-malformed", 2u, rank_role, &k, pid);
        if (errfd < 0)
            return 1;
        int st;
        waitpid(pid[1], &st, 0);
        char out[4096];
        fy_test_read_all(errfd, out, sizeof(out));
        close(errfd);
        kill(pid[0], SIGKILL);
        waitpid(pid[0], NULL, 0);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 100) {
            tap_skip("the point-to-point core did not start here");
            continue;
        }
        TAP_OK(WIFEXITED(st) && WEXITSTATUS(st) == 1,
               "%s: the rank exits with status 1 (status %d)", case_names[k],
               WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
        TAP_OK(strstr(out, "malformed") != NULL,
               "%s: the error says the packet is malformed: %s", case_names[k],
               out);
    }
    return tap_done();
}
