#!/bin/bash
# SPDX-License-Identifier: MIT
# FERRY_STATS=1: the per-rank protocol counters printed at MPI_Finalize
# count what tests/mpi/stats.c sends, by the way it travelled.
# Usage: stats.sh PROGRAM
. "$(dirname "$0")/lib.sh"
prog=$1
[[ -x $prog ]] || mt_fail "usage: stats.sh PROGRAM"
out=$(FERRY_STATS=1 FERRY_XFER=cma FERRY_XFER_REQUIRE=1 $MT_MPIEXEC -n 2 "$prog" 2>&1)
rc=$?
[[ $rc == 77 ]] && { echo "$out" | tail -2; echo "SKIP: cma does not work here"; exit 77; }
[[ $rc == 0 ]] || { echo "$out"; mt_fail "the job failed"; }
echo "$out" | grep "rank=1"
# field VALUE of the rank-1 line that contains PATTERN
val() { echo "$out" | grep "ferry-stats rank=1 .*$1" | grep -o "$2=[0-9]*" | cut -d= -f2; }
[[ $(val proto=eager_mailbox bytes) == 80 ]] || mt_fail "mailbox bytes: want 80 (ten 8-byte messages)"
[[ $(val proto=eager_cells msgs) == 5 && $(val proto=eager_cells bytes) == 5120 ]] ||
    mt_fail "eager cells: want 5 messages, 5120 bytes"
[[ $(val proto=rndv_get msgs) == 3 && $(val proto=rndv_get bytes) == 3145728 ]] ||
    mt_fail "rendezvous get: want 3 messages, 3145728 bytes"
[[ $(val xfer=cma bytes) == 3145728 ]] || mt_fail "cma moved the 3 MiB"
(( $(val matching=unexpected msgs) >= 15 )) || mt_fail "the 15 eager messages arrived before their receives"
(( $(val write=available msgs) >= 3 )) || mt_fail "3 receives were waiting for their messages"
(( $(val write=available bytes) >= 3145728 )) || mt_fail "early bytes include the 3 MiB"
echo "stats: OK"
