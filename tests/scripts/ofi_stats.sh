#!/bin/bash
# SPDX-License-Identifier: MIT
# FERRY_STATS=1 over the libfabric channel (FERRY_NODES=2, FERRY_NET=ofi,
# one rank per node): tests/mpi/stats.c's traffic is counted as chan=ofi,
# its three 1 MiB messages are read by the receiver (rndv_get, fi_read of
# the sender's buffer registered through the pin-down cache: 3 acquires
# on rank 0) - and with FERRY_OFI_RMA=0 streamed after a CTS (rndv_put).
# With FERRY_RECV_WRITE=1 the same three are written by rank 0 into the
# buffers rank 1 offered (fi_write; proto=write, rank 1's receive
# registrations in the pin-down cache), none with FERRY_OFI_RMA=0.
# Usage: ofi_stats.sh PROGRAM   (run through ofi_run.sh)
. "$(dirname "$0")/lib.sh"
prog=$1
[[ -x $prog ]] || mt_fail "usage: ofi_stats.sh PROGRAM"
run() {
    out=$(env FERRY_STATS=1 FERRY_NODES=2 FERRY_NET=ofi FERRY_PROTO=pushzero \
        FERRY_RECV_WRITE=0 "$@" "${MT_LAUNCHER[@]}" -n 2 "$prog" 2>&1)
    rc=$?
    [[ $rc == 0 ]] || { echo "$out"; mt_fail "the job failed ($*)"; }
    echo "$out" | grep -E "chan=|rndv_|group=pin"
}
val() { echo "$out" | grep "ferry-stats rank=$1 .*$2" | grep -o " $3=[0-9]*" | cut -d= -f2; }
run FERRY_OFI_RMA=1
(( $(val 1 chan=ofi msgs) >= 18 )) || mt_fail "rank 1: 18 messages or more over ofi"
(( $(val 1 chan=ofi bytes) >= 3150928 )) || mt_fail "rank 1: the 3 MiB and 5200 B over ofi"
[[ $(val 1 chan=shm msgs) == 0 ]] || mt_fail "rank 1: nothing over shared memory"
[[ $(val 1 proto=rndv_get msgs) == 3 && $(val 1 proto=rndv_get bytes) == 3145728 ]] ||
    mt_fail "rank 1: three 1 MiB reads (rndv_get)"
pin=$(( $(val 0 group=pin hits) + $(val 0 group=pin misses) ))
[[ $pin == 3 ]] || mt_fail "rank 0: 3 registrations acquired, not $pin"
run FERRY_OFI_RMA=0
[[ $(val 1 proto=rndv_put msgs) == 3 && $(val 1 proto=rndv_get msgs) == 0 ]] ||
    mt_fail "FERRY_OFI_RMA=0: three streamed rendezvous (rndv_put)"
run FERRY_OFI_RMA=1 FERRY_RECV_WRITE=1
[[ $(val 1 proto=write msgs) == 3 && $(val 1 proto=write bytes) == 3145728 ]] ||
    mt_fail "rank 1: three 1 MiB messages written into its offered buffers"
[[ $(val 1 proto=rndv_get msgs) == 0 ]] || mt_fail "no rendezvous when written"
[[ $(val 0 write=offers sends) == 3 ]] || mt_fail "rank 0 made 3 RDMA writes"
(( $(val 1 chan=ofi bytes) >= 3150928 )) || mt_fail "rank 1: the written bytes counted over ofi"
(( $(val 1 group=pin pinned_recv) >= 3145728 )) ||
    mt_fail "rank 1: its offered buffers registered for receiving"
[[ $(val 1 group=pin pinned_send) == 0 ]] || mt_fail "rank 1 registered no send buffer"
run FERRY_OFI_RMA=0 FERRY_RECV_WRITE=1
[[ $(val 1 proto=write msgs) == 0 && $(val 1 proto=rndv_put msgs) == 3 ]] ||
    mt_fail "FERRY_OFI_RMA=0: no offers across nodes, three streamed"
echo "ofi_stats: OK"
