/* SPDX-License-Identifier: MIT */
/* The one table of FERRY_* environment variables: type, default, help.
 * ferry-info prints it; fy_env_load() parses it once at MPI_Init. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

struct fy_env_var fy_env[FY_ENV_COUNT] = {
    [FY_ENV_LOG] = {"FERRY_LOG", FY_ENV_STRING, "warn",
                    "log level: error, warn, info or debug"},
    [FY_ENV_XFER] = {"FERRY_XFER", FY_ENV_STRING, "auto",
                     "large-message mechanism: auto, cma, procmem, shmbuf, "
                     "queue or net, or by size: name,SIZE:name,..."},
    [FY_ENV_EAGER_MAX] = {"FERRY_EAGER_MAX", FY_ENV_SIZE, "4096",
                          "largest message sent eagerly through a queue cell "
                          "(at most one cell's payload)"},
    [FY_ENV_FASTBOX_MAX] = {"FERRY_FASTBOX_MAX", FY_ENV_SIZE, "256",
                            "largest message sent through the per-peer "
                            "mailbox ring (0 disables it, at most 1784)"},
    [FY_ENV_CELL_SIZE] = {"FERRY_CELL_SIZE", FY_ENV_SIZE, "16384",
                          "queue cell size in bytes, header included "
                          "(1 KiB to 1 MiB, multiple of 64)"},
    [FY_ENV_CELLS] = {"FERRY_CELLS", FY_ENV_INT, "64",
                      "queue cells owned by each rank (8 to 65536)"},
    [FY_ENV_SHMBUF_SIZE] = {"FERRY_SHMBUF_SIZE", FY_ENV_SIZE, "65536",
                            "size of each half of a pair's double buffer "
                            "(4 KiB to 16 MiB, multiple of 64)"},
    [FY_ENV_SPIN] = {"FERRY_SPIN", FY_ENV_INT, "20",
                     "empty MPI_Test/Iprobe polls in a row before the rank "
                     "yields the core when ranks outnumber cores (blocking "
                     "waits yield at once then; with a core each, polls "
                     "before a wait yields under MPI_THREAD_MULTIPLE)"},
    [FY_ENV_WAIT] = {"FERRY_WAIT", FY_ENV_STRING, "auto",
                     "waiting: auto (sleep when ranks outnumber cores), "
                     "spin, or block"},
    [FY_ENV_NO_CMA] = {"FERRY_NO_CMA", FY_ENV_BOOL, "0",
                       "pretend process_vm_readv is forbidden (tests the "
                       "fallback)"},
    [FY_ENV_SPLIT_MIN] = {"FERRY_SPLIT_MIN", FY_ENV_SIZE, "32768",
                          "cma messages from this size are copied by both "
                          "ranks at once, in chunks (0: receiver only)"},
    [FY_ENV_TUNING] = {"FERRY_TUNING", FY_ENV_STRING, "",
                       "tuning file written by ferry-bench --tune"},
    [FY_ENV_XFER_REQUIRE] = {"FERRY_XFER_REQUIRE", FY_ENV_BOOL, "0",
                             "a mechanism FERRY_XFER names that does not "
                             "work here ends MPI_Init with exit status 77 "
                             "(a test skip) instead of falling back"},
    [FY_ENV_SHMBUF_PADS] = {"FERRY_SHMBUF_PADS", FY_ENV_INT, "4",
                            "double buffers each rank owns and lends to one "
                            "sender's message at a time (shmbuf)"},
    [FY_ENV_STATS] = {"FERRY_STATS", FY_ENV_BOOL, "0",
                      "print per-protocol and per-mechanism message counts "
                      "of each rank at MPI_Finalize (ferry-stats lines)"},
    [FY_ENV_COLL] = {"FERRY_COLL", FY_ENV_STRING, "auto",
                     "collectives, blocking and nonblocking: auto or shm "
                     "(through shared memory when all members share the "
                     "node), or p2p (the point-to-point algorithms)"},
    [FY_ENV_COLL_CMA_MIN] = {"FERRY_COLL_CMA_MIN", FY_ENV_SIZE, "65536",
                             "broadcasts from this size are read by every "
                             "receiver straight from the root's buffer "
                             "(process_vm_readv), below it through shared "
                             "memory (or the tuning file's coll_cma_min)"},
    [FY_ENV_COLL_SLICE_MIN] = {"FERRY_COLL_SLICE_MIN", FY_ENV_SIZE, "2049",
                               "reductions over shared memory of this many "
                               "bytes (per 32 KiB round) and more combine a "
                               "slice per member, smaller ones the whole "
                               "vector (or the tuning file's "
                               "coll_slice_min)"},
    [FY_ENV_COLL_DIRECT_MIN] = {"FERRY_COLL_DIRECT_MIN", FY_ENV_SIZE, "262144",
                                "reductions among more than two ranks of "
                                "this many bytes and more: each member "
                                "combines its slice reading the others' "
                                "buffers (process_vm_readv), no cells; "
                                "Ireduce: a slice per member, not the root "
                                "alone (or the tuning file's "
                                "coll_direct_min)"},
    [FY_ENV_PROTO] = {"FERRY_PROTO", FY_ENV_STRING, "auto",
                      "protocol above the eager limit: auto (Push-Zero here, "
                      "or the tuning file's), pushpull (push "
                      "the first FERRY_BTP bytes, pull the rest), pushzero "
                      "(plain rendezvous) or pushall (everything pushed)"},
    [FY_ENV_BTP] = {"FERRY_BTP", FY_ENV_SIZE, "64",
                    "Push-Pull: bytes pushed with the message before the "
                    "receiver pulls the rest (up to 224 ride in the "
                    "mailbox with the envelope)"},
    [FY_ENV_BTP1] = {"FERRY_BTP1", FY_ENV_SIZE, "0",
                     "Push-Pull: of FERRY_BTP, bytes in the first packet "
                     "(BTP(1)); the rest follows at once, overlapped with "
                     "the receiver's pull (BTP(2)); 0: as many as one cell "
                     "holds"},
    [FY_ENV_PUSH_BUF] = {"FERRY_PUSH_BUF", FY_ENV_SIZE, "4M",
                         "Push-Pull: pushed bytes a rank keeps for messages "
                         "not yet received; beyond it they are pulled again "
                         "when received"},
    [FY_ENV_RECV_WRITE] = {"FERRY_RECV_WRITE", FY_ENV_BOOL, "1",
                           "receiver-initiated write: a receive naming its "
                           "source, posted before its message, offers its "
                           "buffer and the sender writes into it"},
    [FY_ENV_AUTO_PUSH_MAX] = {"FERRY_AUTO_PUSH_MAX", FY_ENV_SIZE, "65536",
                              "FERRY_PROTO=auto: a blocking send up to this "
                              "size that finds no receive buffer offered and "
                              "no receiver blocked in its receive is pushed "
                              "whole, so its sender need not wait for a late "
                              "receiver (0: never)"},
    [FY_ENV_NET_PUSH_MAX] = {"FERRY_NET_PUSH_MAX", FY_ENV_SIZE, "1M",
                             "FERRY_PROTO=auto: a blocking send to a rank on "
                             "another node that finds no receive buffer "
                             "offered is pushed whole up to this size (no "
                             "rendezvous round trip over the network, and a "
                             "late receiver does not hold its sender; a "
                             "quarter of FERRY_PUSH_BUF's default; 0: the "
                             "limits of one node), and so is every "
                             "nonblocking one up to 128 KiB where this "
                             "is larger"},
    [FY_ENV_PUSH_MAX] = {"FERRY_PUSH_MAX", FY_ENV_STRING, "auto",
                         "FERRY_PROTO=auto: a blocking send that finds no "
                         "receive buffer offered is pushed whole up to "
                         "this size too, where it exceeds "
                         "FERRY_AUTO_PUSH_MAX, and so is a nonblocking one "
                         "among the first two to its peer since that "
                         "peer's last message; auto: the largest size at "
                         "which two memcpy's beat one cma call, measured at "
                         "MPI_Init on buffers evicted from the caches (up "
                         "to a quarter of a rank's cells; 0 where "
                         "FERRY_XFER or FERRY_NO_CMA chose the mechanism), "
                         "or a size (0: never)"},
    [FY_ENV_NODES] = {"FERRY_NODES", FY_ENV_INT, "1",
                      "Ferry's mpiexec: split the ranks into this many "
                      "virtual nodes (contiguous blocks of ranks, the first "
                      "size%n blocks one rank larger), each with its own "
                      "shared segment; between them only the network "
                      "channel (1 to the number of ranks)"},
    [FY_ENV_NET] = {"FERRY_NET", FY_ENV_STRING, "auto",
                    "network channel to ranks on other nodes: auto (tcp), "
                    "tcp, or ofi (libfabric, loaded at run time; an "
                    "error where it is not built or has no provider)"},
    [FY_ENV_TCP_QUEUE] = {"FERRY_TCP_QUEUE", FY_ENV_SIZE, "4194304",
                          "bytes a rank queues for one peer's TCP socket "
                          "before the channel pushes back (64 KiB to 1 GiB)"},
    [FY_ENV_TCP_CC] = {"FERRY_TCP_CC", FY_ENV_STRING, "auto",
                       "TCP congestion control of the channel's connections: "
                       "auto (the system's, but cubic or reno instead of "
                       "bbr, whose pacing halves a request/reply stream's "
                       "rate here), system, or a name (cubic, reno, ...)"},
    [FY_ENV_OFI_PROVIDER] = {"FERRY_OFI_PROVIDER", FY_ENV_STRING, "",
                             "FERRY_NET=ofi: the libfabric provider to use "
                             "(e.g. tcp, which is tcp;ofi_rxm for reliable "
                             "datagrams; empty: fi_getinfo's first)"},
    [FY_ENV_OFI_RMA] = {"FERRY_OFI_RMA", FY_ENV_BOOL, "1",
                        "FERRY_NET=ofi: 1: the receiver of a rendezvous "
                        "reads the sender's registered buffer (fi_read) "
                        "and a sender writes into an offered receive "
                        "buffer (fi_write) where the provider offers RMA; "
                        "0: always CTS and streamed data, no offers"},
    [FY_ENV_OFI_WAIT] = {"FERRY_OFI_WAIT", FY_ENV_STRING, "auto",
                         "FERRY_NET=ofi: fd (the completion queue has a "
                         "file descriptor to sleep on, signalled at every "
                         "completion), poll (none: a sleeping rank polls, "
                         "50 us to 1 ms apart), or auto (fd where ranks "
                         "sleep, i.e. outnumber cores or FERRY_WAIT=block; "
                         "poll where they spin)"},
    [FY_ENV_PIN_MAX] = {"FERRY_PIN_MAX", FY_ENV_SIZE, "64M",
                        "pin-down cache: bytes of registered (pinned) memory "
                        "per process, half for sends and half for receives "
                        "(0: unbounded)"},
    [FY_ENV_PIN_SEND_MAX] = {"FERRY_PIN_SEND_MAX", FY_ENV_SIZE, "0",
                             "pin-down cache: send budget in bytes (0: "
                             "unbounded), overriding half of FERRY_PIN_MAX "
                             "when set"},
    [FY_ENV_PIN_RECV_MAX] = {"FERRY_PIN_RECV_MAX", FY_ENV_SIZE, "0",
                             "pin-down cache: receive budget in bytes (0: "
                             "unbounded), overriding half of FERRY_PIN_MAX "
                             "when set"},
    [FY_ENV_PIN_CACHE] = {"FERRY_PIN_CACHE", FY_ENV_BOOL, "1",
                          "pin-down cache: keep registrations after use "
                          "(0: deregister at every release)"},
    [FY_ENV_MT_LOCKS] = {"FERRY_MT_LOCKS", FY_ENV_STRING, "fine",
                         "MPI_THREAD_MULTIPLE: fine (engine, object, "
                         "window and file locks; lock-free queries) or "
                         "global (one library lock for every call)"},
    [FY_ENV_RECV_WRITE_MIN] = {"FERRY_RECV_WRITE_MIN", FY_ENV_SIZE, "65536",
                               "smallest receive buffer offered to its "
                               "sender for the write protocol (default: "
                               "64 KiB for a blocking receive, where the "
                               "write beat the rendezvous for an early "
                               "receiver, 256 KiB for MPI_Irecv; a value "
                               "set here applies to both)"},
    [FY_ENV_BOOT] = {"FERRY_BOOT", FY_ENV_STRING, "auto",
                     "how the job starts: auto (from the launcher's "
                     "variables), ferry, pmi2, pmi1, pmix or singleton"},
    [FY_ENV_RMA_THREAD] = {"FERRY_RMA_THREAD", FY_ENV_STRING, "auto",
                           "one-sided progress thread, for passive target "
                           "on windows served by active messages (no cma "
                           "or procmem): auto (start it when such a window "
                           "exists), 1 (with any window), 0 (never: the "
                           "target progresses only inside MPI calls)"},
    [FY_ENV_RMA_PROCMEM_MAX] = {"FERRY_RMA_PROCMEM_MAX", FY_ENV_SIZE, "4096",
                                "one-sided operations on user memory "
                                "(Win_create, dynamic) up to this size use "
                                "procmem (cheaper per call), larger ones cma "
                                "(cheaper per byte); 0: cma only"},
    [FY_ENV_RMA_NT_MIN] = {"FERRY_RMA_NT_MIN", FY_ENV_SIZE, "1048576",
                           "puts and gets on shared-memory windows from this "
                           "size copy with non-temporal stores (x86-64; 0: "
                           "always memcpy)"},
    [FY_ENV_RMA_AM_MAX] = {"FERRY_RMA_AM_MAX", FY_ENV_SIZE, "16384",
                           "one-sided operations on user memory (Win_create, "
                           "dynamic) up to this size are handed to a target "
                           "that is inside MPI and served by it (no system "
                           "call), others by cma/procmem; at most 16384; 0: "
                           "never"},
    [FY_ENV_RMA_SPLIT_MIN] = {"FERRY_RMA_SPLIT_MIN", FY_ENV_SIZE, "262144",
                              "contiguous puts and gets on user memory "
                              "(Win_create, dynamic) from this size are "
                              "copied by origin and target together when "
                              "the target is inside MPI (two cores, each by "
                              "single copy); 0: never"},
    [FY_ENV_RMA_REMAP] = {"FERRY_RMA_REMAP", FY_ENV_BOOL, "1",
                          "Win_create moves the pages of each rank's window "
                          "onto shared memory the other ranks map (contents "
                          "and addresses unchanged; private again at "
                          "Win_free), so one-sided operations on it are "
                          "loads and stores; only with FERRY_XFER=auto, in a "
                          "process with one thread; 0: never"},
    [FY_ENV_UNEXP_CACHE] = {"FERRY_UNEXP_CACHE", FY_ENV_SIZE, "16M",
                            "memory of unexpected messages over 4 KiB kept "
                            "for the next ones instead of given back to "
                            "malloc (which returns it to the kernel); 0: "
                            "none"},
    [FY_ENV_COPY_ALIAS] = {"FERRY_COPY_ALIAS", FY_ENV_STRING, "auto",
                           "copies whose destination is 1-31 bytes past "
                           "the source modulo 4096 (slow for memcpy and "
                           "process_vm_readv on some CPUs): auto (measured "
                           "at MPI_Init), on (vector loop; cma bounced "
                           "through a scratch buffer), off (as given)"},
};

int fy_parse_size(const char *s, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || errno || v < 0)
        return -EINVAL;
    long long mul = 1;
    switch (tolower((unsigned char)*end)) {
    case '\0':
        break;
    case 'k':
        mul = 1LL << 10;
        end++;
        break;
    case 'm':
        mul = 1LL << 20;
        end++;
        break;
    case 'g':
        mul = 1LL << 30;
        end++;
        break;
    default:
        return -EINVAL;
    }
    if (*end == 'i' || *end == 'I')
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end != '\0' || v > LLONG_MAX / mul)
        return -EINVAL;
    *out = v * mul;
    return 0;
}

static int parse_one(struct fy_env_var *v, const char *text)
{
    char *end;
    switch (v->type) {
    case FY_ENV_STRING:
        v->value.s = text;
        return 0;
    case FY_ENV_BOOL:
        if (!strcmp(text, "1") || !strcasecmp(text, "yes") ||
            !strcasecmp(text, "true") || !strcasecmp(text, "on"))
            v->value.i = 1;
        else if (!strcmp(text, "0") || !strcasecmp(text, "no") ||
                 !strcasecmp(text, "false") || !strcasecmp(text, "off"))
            v->value.i = 0;
        else
            return -EINVAL;
        return 0;
    case FY_ENV_INT:
        errno = 0;
        v->value.i = strtoll(text, &end, 10);
        return (end == text || *end || errno) ? -EINVAL : 0;
    case FY_ENV_SIZE:
        return fy_parse_size(text, &v->value.i);
    }
    return -EINVAL;
}

int fy_env_load(void)
{
    /* Every variable gets its default first, then its value from the
     * environment: a bad one is reported (all of them, not only the first)
     * and keeps its default, so what reads the settings after a failed load
     * (ferry-info) still finds valid ones. */
    int rc = 0;
    for (size_t i = 0; i < FY_ARRAY_LEN(fy_env); i++) {
        struct fy_env_var *v = &fy_env[i];
        const char *text = getenv(v->name);
        v->from_env = text != NULL && *text != '\0';
        if (parse_one(v, v->def) != 0)
            return -EINVAL; /* a bad default is a bug */
        if (v->from_env && parse_one(v, text) != 0) {
            FY_ERROR("%s='%s' is not a valid %s (%s)", v->name, text,
                     v->type == FY_ENV_BOOL   ? "boolean"
                     : v->type == FY_ENV_SIZE ? "size"
                                              : "integer",
                     v->help);
            (void)parse_one(v, v->def);
            v->from_env = false;
            rc = -EINVAL;
        }
    }
    if (rc)
        return rc;
    const char *lvl = fy_env_str(FY_ENV_LOG);
    static const char *levels[] = {"error", "warn", "info", "debug"};
    size_t l;
    for (l = 0; l < FY_ARRAY_LEN(levels); l++)
        if (!strcasecmp(lvl, levels[l]))
            break;
    if (l == FY_ARRAY_LEN(levels)) {
        FY_ERROR("FERRY_LOG='%s' is not one of error, warn, info, debug", lvl);
        return -EINVAL;
    }
    fy_log_threshold = (enum fy_log_level)l;
    const char *rt = fy_env_str(FY_ENV_RMA_THREAD);
    if (strcmp(rt, "auto") && strcmp(rt, "0") && strcmp(rt, "1")) {
        FY_ERROR("FERRY_RMA_THREAD='%s' is not one of auto, 0, 1", rt);
        return -EINVAL;
    }
    return 0;
}

double fy_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int fy_online_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
